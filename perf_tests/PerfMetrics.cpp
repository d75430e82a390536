// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MS-SSIM and masked SSIM benchmarks (issue 17): the training objects kssim::MSSSIM and kssim::MaskedSSIM,
// forward and forward + backward of image 1, on the shapes where the SSIM benchmarks have their reference
// numbers (same names after the family: compare with ssim2d/<mode>/<dtype>/valid/<shape>/<space>).
//
//   msssim/<fwd|fwd+bwd>/<dtype>/<shape>/<space>                        five scales, window 11, valid
//   masked/<weights|normalized>/<fwd|fwd+bwd>/<dtype>/<padding>/<shape>/<space>   mask (N, 1, H, W)
//
// The images and the mask are random in [0, 1) (fill_uniform; a fractional mask costs what a binary one
// does), set up outside the timed loop; each iteration is fenced and timed like bench_ssim (PerfSSIM.hpp).
#include "PerfSSIM.hpp"

namespace kssim_perf {
namespace {

using Image = std::array<int, 4>;

template <class ExecSpace, class T>
using View4 = Kokkos::View<T****, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

template <class ExecSpace, class T>
View4<ExecSpace, T> random_view(const ExecSpace& exec, const char* label, const Image& e, std::uint64_t seed) {
  View4<ExecSpace, T> v(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), e[0], e[1], e[2],
                        e[3]);
  fill_uniform(exec, v.data(), v.size(), seed);
  return v;
}

// Times step() after a warm-up whose value must be a finite number in [-1, 1]; records us, Mvoxel/s and
// the peers' way of timing (us_b2b, us_flushed: what the binding's overhead is measured against,
// perf_tests/time_metrics.py).
template <class ExecSpace, class Step, class Value>
void time_loss(benchmark::State& state, const ExecSpace& exec, const Image& e, const Step& step, const Value& value) {
  step();
  Kokkos::fence("kssim_perf: warm-up");
  const double v = value();
  if (!std::isfinite(v) || v < -1.0 || v > 1.0) {
    state.SkipWithError(("value out of range: " + std::to_string(v)).c_str());
    return;
  }
  const double per_iter = timed_iterations(state, step);
  peer_style_counters(state, exec, step);
  state.counters["us"] = benchmark::Counter(per_iter * 1e6);
  state.counters["Mvoxel/s"] = benchmark::Counter(per_iter > 0 ? voxels(e) / per_iter / 1e6 : 0);
  state.SetLabel(std::string(ExecSpace::name()) + " value=" + std::to_string(v));
}

template <class ExecSpace, class T>
void bench_ms_ssim(benchmark::State& state, Image e, Mode mode) {
  try {
    ExecSpace exec;
    auto x = random_view<ExecSpace, T>(exec, "img1", e, 20261129), y = random_view<ExecSpace, T>(exec, "img2", e, 20261130);
    View4<ExecSpace, T> g;
    if (mode != Mode::Forward) g = View4<ExecSpace, T>(Kokkos::view_alloc(exec, "grad1"), e[0], e[1], e[2], e[3]);
    kssim::MSSSIM<ExecSpace, T> loss(exec, e, {}, gradients_of(mode));
    time_loss(state, exec, e, [&] {
          loss.forward(x, y);
          if (mode != Mode::Forward) loss.backward(g);
        },
        [&] { return loss.value_on_host(); });
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

template <class ExecSpace, class T>
void bench_masked(benchmark::State& state, Image e, kssim::MaskMode mask_mode, kssim::Padding padding, Mode mode) {
  try {
    ExecSpace exec;
    auto x = random_view<ExecSpace, T>(exec, "img1", e, 20261129), y = random_view<ExecSpace, T>(exec, "img2", e, 20261130);
    auto m = random_view<ExecSpace, T>(exec, "mask", {e[0], 1, e[2], e[3]}, 20261131);
    View4<ExecSpace, T> g;
    if (mode != Mode::Forward) g = View4<ExecSpace, T>(Kokkos::view_alloc(exec, "grad1"), e[0], e[1], e[2], e[3]);
    kssim::Options opts;
    opts.padding = padding;
    kssim::MaskedSSIM<ExecSpace, T> loss(exec, e, mask_mode, opts, gradients_of(mode));
    time_loss(state, exec, e, [&] {
          loss.forward(x, y, m);
          if (mode != Mode::Forward) loss.backward(g);
        },
        [&] { return loss.value_on_host(); });
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

template <class ExecSpace, class T>
void register_metrics_for(const Image& e) {
  if (!shape_enabled<ExecSpace>(e)) return;
  const std::string tail = std::string("/") + dtype_name<T>() + "/";
  const bool ms_fits = std::min(e[2], e[3]) >= kssim::MSSSIMOptions{}.min_extent();
  for (Mode mode : {Mode::Forward, Mode::ForwardBackward}) {
    const std::string ms = "msssim/" + std::string(mode_name(mode)) + tail + shape_name(e) + "/" + ExecSpace::name();
    if (ms_fits)
      benchmark::RegisterBenchmark(ms.c_str(), [e, mode](benchmark::State& st) { bench_ms_ssim<ExecSpace, T>(st, e, mode); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    for (kssim::MaskMode mask_mode : {kssim::MaskMode::Weights, kssim::MaskMode::Normalized})
      for (kssim::Padding padding : all_paddings) {
        const std::string name = std::string("masked/") + kssim::to_string(mask_mode) + "/" + mode_name(mode) + tail +
                                 kssim::to_string(padding) + "/" + shape_name(e) + "/" + ExecSpace::name();
        benchmark::RegisterBenchmark(name.c_str(), [e, mask_mode, padding, mode](benchmark::State& st) {
          bench_masked<ExecSpace, T>(st, e, mask_mode, padding, mode);
        })->UseManualTime()->Unit(benchmark::kMicrosecond);
      }
  }
}

}  // namespace

void register_metric_benchmarks() {
  on_default_spaces([](auto space) {
    // The binding's shapes (perf_tests/time_metrics.py); MS-SSIM's five scales do not fit 64x1x128x128.
    for (const Image& e : {Image{1, 3, 1080, 1920}, Image{8, 3, 512, 512}, Image{64, 1, 128, 128}})
      for_float_and_double([&](auto value) { register_metrics_for<decltype(space), decltype(value)>(e); });
  });
}

}  // namespace kssim_perf
