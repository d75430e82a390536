// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-stage benchmarks: each stage kernel of a 2D forward + backward alone, on one 1x3x1080x1920 image
// pair, to time each stage against its byte floor (the GB/s counter):
//
//   kssim_perf_tests --benchmark_filter='^stages/'
//
// Names: stages/<stage>/<dtype>/1x3x1080x1920/<execution space>. Stages, with the planes each must read
// and write per pixel (GB/s counts those bytes): row_blur (2 images in, 4 moment planes out),
// column_map_partials (4 in, map sum and 3 partial planes out: the gradient of image 1),
// column_map (4 in, forward only), adjoint_column (3 in, 3 out), adjoint_row (3 planes + 2 images in,
// 1 gradient out). Inputs are random; the stage's inputs are prepared once outside the timed loop.
#include "PerfSSIM.hpp"

#include <kssim/kssim.hpp>

#include <benchmark/benchmark.h>

#include <functional>
#include <string>

namespace kssim_perf {
namespace {

using namespace kssim::impl;

template <class ExecSpace, class T>
struct StageSetup {
  using Mem = typename ExecSpace::memory_space;
  static constexpr int N = 1, C = 3, H = 1080, W = 1920;
  ExecSpace exec;
  kssim::Options opts;
  Geometry g = row_pitched<ExecSpace, T>(make_geometry<4>({N, C, H, W}, opts));
  Kokkos::View<T****, Kokkos::LayoutRight, Mem> a{"a", N, C, H, W}, b{"b", N, C, H, W}, grad{"grad", N, C, H, W};
  InputArray<T> x = as_rank5<InputArray<T>>(a), y = as_rank5<InputArray<T>>(b);
  OutputArray<T> g1 = as_rank5<OutputArray<T>>(grad);
  Kokkos::View<T* [2], Mem> shifts{"shifts", N * C};
  PlaneStore<T, Mem> stats{"stats", moment_planes, g.row_plane_size()}, partials{"partials", 3, g.padded_map_size()},
      adjoint{"adjoint", 3, g.row_plane_size()};
  GaussianWindow<T> window = make_gaussian_window<T>(opts.window_size, opts.sigma);
  GaussianWindow<T> reversed = window.reversed();
  AxisPass column{N * C, H, g.oh, g.ow, g.pad_h, 1};
  AxisPass adjoint_pass;
  MapSumStore<Mem> sums;

  StageSetup() {
    fill_uniform(exec, a.data(), a.size(), 20261129);
    fill_uniform(exec, b.data(), b.size(), 20261130);
    column.set_steps(g.row_pitch, g.row_pitch);  // as Plan.hpp does for images
    column.set_tiles(axis_tile_len<ExecSpace, T>(exec, moment_planes, g.window), Tiles<ExecSpace, T>::axis_inner);
    adjoint_pass = column.adjoint(g.window);
    adjoint_pass.set_tiles(column.tile_len, Tiles<ExecSpace, T>::axis_inner);
    sums = MapSumStore<Mem>(exec, N * C, column.tiles_per_outer(), double(g.map_size()));
    compute_shifts<ExecSpace>(exec, g, x, y, shifts.data());
    row_blur(exec, opts, row_pass());
    column_blur(exec, opts, map_pass(true));
    adjoint_column(exec, opts, adjoint_column_pass());
    exec.fence();
  }

  RowBlur<ExecSpace, T> row_pass() const {
    return RowBlur<ExecSpace, T>{x, y, shifts.data(), plane_array(stats), window, g};
  }

  AdjointColumn<ExecSpace, T, 3> adjoint_column_pass() const {
    return AdjointColumn<ExecSpace, T, 3>{plane_array(partials), plane_array(adjoint), reversed, adjoint_pass};
  }

  ColumnBlur<ExecSpace, T, ColumnOutput::Map> map_pass(bool gradient) const {
    ColumnBlur<ExecSpace, T, ColumnOutput::Map> k{};
    k.in = plane_array(stats);
    if (gradient) k.partials = plane_array(partials);
    k.wanted = {gradient, false};
    k.sums = sums.arrays;
    k.shifts = shifts.data();
    k.window = window;
    k.a = column;
    k.g = g;
    k.c1 = T(1e-4);
    k.c2 = T(9e-4);
    return k;
  }

  AdjointRow<ExecSpace, T, 3> adjoint_row_pass() const {
    AdjointRow<ExecSpace, T, 3> k{};
    k.in = plane_array(adjoint);
    k.wanted = {true, false};
    k.x = x;
    k.y = y;
    k.grad1 = g1;
    k.shifts = shifts.data();
    k.scale = 1.0 / double(g.map_size());
    k.window = reversed;
    k.g = g;
    return k;
  }
};

template <class ExecSpace, class T>
void bench_stage(benchmark::State& state, const std::string& stage) {
  try {
    StageSetup<ExecSpace, T> s;
    std::function<void()> run;
    double planes = 0;  // planes read + written per pixel
    if (stage == "row_blur") {
      run = [&] { row_blur(s.exec, s.opts, s.row_pass()); };
      planes = 6;
    } else if (stage == "column_map_partials") {
      run = [&] { column_blur(s.exec, s.opts, s.map_pass(true)); };
      planes = 7;
    } else if (stage == "column_map") {
      run = [&] { column_blur(s.exec, s.opts, s.map_pass(false)); };
      planes = 4;
    } else if (stage == "adjoint_column") {
      run = [&] { adjoint_column(s.exec, s.opts, s.adjoint_column_pass()); };
      planes = 6;
    } else {
      run = [&] { adjoint_row(s.exec, s.opts, s.adjoint_row_pass()); };
      planes = 6;
    }
    run();
    s.exec.fence();
    const double per_iter = timed_iterations(state, run);
    const double bytes = planes * double(s.g.input_size()) * sizeof(T);
    state.counters["us"] = benchmark::Counter(per_iter * 1e6);
    state.counters["GB/s"] = benchmark::Counter(per_iter > 0 ? bytes / per_iter / 1e9 : 0);
    state.counters["bytes_model"] = benchmark::Counter(bytes);
    state.SetLabel(ExecSpace::name());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

template <class ExecSpace>
void register_space() {
  for (const char* stage : {"row_blur", "column_map_partials", "column_map", "adjoint_column", "adjoint_row"}) {
    const std::string tail = std::string("/1x3x1080x1920/") + ExecSpace::name();
    benchmark::RegisterBenchmark(("stages/" + std::string(stage) + "/float" + tail).c_str(),
                                 [stage](benchmark::State& st) { bench_stage<ExecSpace, float>(st, stage); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("stages/" + std::string(stage) + "/double" + tail).c_str(),
                                 [stage](benchmark::State& st) { bench_stage<ExecSpace, double>(st, stage); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

void register_stage_benchmarks() {
  on_default_spaces([](auto space) { register_space<decltype(space)>(); });
}

}  // namespace kssim_perf
