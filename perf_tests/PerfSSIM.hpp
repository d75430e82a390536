// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Shared machinery of the SSIM benchmarks: the modes, the work model (bytes and FLOPs per iteration),
// and one timed benchmark body templated on execution space, value type and rank.
//
// Benchmark names: ssim<2d|3d>[@<schedule>]/<mode>/<dtype>/<padding>/<shape>/<execution space>, e.g.
//   ssim2d/fwd+bwd/float/valid/1x3x1080x1920/Cuda/manual_time
// dtype: float, double, and for images half and bhalf (16-bit images and gradients, computed in float:
// include/kssim/impl/core/Storage.hpp) where the build has them on that execution space.
// (Google Benchmark appends /manual_time). Select with --benchmark_filter, a regular expression:
//   --benchmark_filter='ssim2d/fwd\+bwd/float/valid/1x3x1080x1920'
//
// Modes:
//   fwd       kssim::SSIM constructed with Gradients::None, forward() only (mean SSIM, no map written).
//   fwd+bwd   Gradients::Image1, forward() + backward(grad1): what fused-ssim's training mode computes.
//   fwd+bwd2  Gradients::Both, forward() + backward(grad1, grad2).
//
// Host backends: the shapes with more than 2^23 voxels (1x3x2160x3840, 1x1x4096x4096, 1x1x256^3) are
// registered only when KSSIM_BENCH_ALL=1 is set in the environment, so that a default run stays short
// on a few cores. GPU backends always get every shape.

#include "StepTiming.hpp"

#include <kssim/kssim.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace kssim_perf {

// Uniform values in [0, 1) at p[0 .. n), a hash of (seed, index) per element (splitmix64): a kernel that
// holds only a pointer. Kokkos' fill_random dispatches functors that hold Views, which the mdspan-based
// View under nvcc misreads (include/kssim/impl/core/KernelArrays.hpp): the benchmarks would time zeros there.
template <class ExecSpace, class T>
void fill_uniform(const ExecSpace& exec, T* p, std::size_t n, std::uint64_t seed) {
  // No if constexpr in the lambda: nvcc refuses extended lambdas that first capture a variable inside one.
  using Wide = std::conditional_t<kssim::is_16bit_storage_v<T>, float, T>;
  Kokkos::parallel_for(
      "kssim_perf::fill_uniform", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, std::int64_t(n)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * std::uint64_t(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        const double u = double(z >> 11) * 0x1.0p-53;
        p[i] = static_cast<T>(Wide(u));  // 16-bit types convert from float
      });
}

enum class Mode { Forward, ForwardBackward, ForwardBackward2 };

inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Forward: return "fwd";
    case Mode::ForwardBackward: return "fwd+bwd";
    case Mode::ForwardBackward2: return "fwd+bwd2";
  }
  return "?";
}

inline kssim::Gradients gradients_of(Mode m) {
  switch (m) {
    case Mode::Forward: return kssim::Gradients::None;
    case Mode::ForwardBackward: return kssim::Gradients::Image1;
    case Mode::ForwardBackward2: return kssim::Gradients::Both;
  }
  return kssim::Gradients::None;
}

inline constexpr Mode all_modes[] = {Mode::Forward, Mode::ForwardBackward, Mode::ForwardBackward2};
inline constexpr kssim::Padding all_paddings[] = {kssim::Padding::Valid, kssim::Padding::Same};

// Work of one iteration under the four-stage (2D) / five-stage (3D) design, counted per pass over the
// intermediate planes. Let S_0 be the number of input voxels (N*C*D*H*W) and S_k the size of the planes
// after the k-th forward axis pass (W, then H, then D for volumes): each pass shrinks its axis from n to
// the map extent (n - w + 1 for valid padding, n for same). S_last is the map size.
//
//   Forward pass k (k = 1 .. P, P = 2 for images, 3 for volumes):
//     reads  in_k * S_{k-1}   (in_1 = 2 images, in_k = 4 moment planes otherwise)
//     writes out_k * S_k      (out_k = 4 moments; the last pass writes the K partial-derivative
//                              planes instead: K = 0 forward-only, 3 for one gradient, 4 for two)
//     FLOPs  2 * 4 * w * S_k  (4 moments, one multiply-add per window tap each)
//   Backward (fwd+bwd, fwd+bwd2), adjoint of pass k for k = P .. 1:
//     reads  K * S_k          (+ 2 * S_0 for the two images in the adjoint row pass, k = 1)
//     writes K * S_{k-1}      (the adjoint row pass, k = 1, writes G * S_0 instead: G gradients)
//     FLOPs  2 * K * w * S_{k-1}
// Bytes are those counts times the bytes of their type: images and gradients of the images' type (2 bytes
// for 16-bit images), planes of the compute type. Only the window multiply-adds are counted as FLOPs; the
// pointwise SSIM formula and its partial derivatives (a few dozen operations per map pixel), the
// recentring shifts, the per-tile sums and the halo re-reads of neighbouring tiles are left out, so
// GB/s and GFLOP/s are lower bounds on what the hardware moved and computed.
struct Work {
  double bytes = 0;
  double flops = 0;
};

template <std::size_t Rank>
Work work_model(const std::array<int, Rank>& extents, int window, kssim::Padding padding, Mode mode,
                std::size_t value_bytes, std::size_t image_bytes) {
  // Spatial axes in the order of the forward passes: W, H, then D for volumes.
  std::vector<double> n, o;
  for (int a = int(Rank) - 1; a >= 2; --a) {
    n.push_back(extents[a]);
    o.push_back(padding == kssim::Padding::Valid ? extents[a] - window + 1 : extents[a]);
  }
  const int passes = int(n.size());
  std::vector<double> s(passes + 1);  // s[k]: plane size after k forward passes
  s[0] = double(extents[0]) * extents[1];
  for (double e : n) s[0] *= e;
  for (int k = 1; k <= passes; ++k) s[k] = s[k - 1] / n[k - 1] * o[k - 1];

  const int partials = mode == Mode::Forward ? 0 : (mode == Mode::ForwardBackward ? 3 : 4);
  const int gradients = mode == Mode::ForwardBackward2 ? 2 : 1;
  double elements = 0, image_elements = 0, flops = 0;  // planes; images and gradients
  for (int k = 1; k <= passes; ++k) {
    const int out = k == passes ? partials : 4;
    (k == 1 ? image_elements : elements) += (k == 1 ? 2 : 4) * s[k - 1];
    elements += out * s[k];
    flops += 2.0 * 4 * window * s[k];
  }
  if (mode != Mode::Forward) {
    for (int k = passes; k >= 1; --k) {
      elements += partials * s[k];
      (k == 1 ? image_elements : elements) += k == 1 ? (2 + gradients) * s[0] : partials * s[k - 1];
      flops += 2.0 * partials * window * s[k - 1];
    }
  }
  return {elements * double(value_bytes) + image_elements * double(image_bytes), flops};
}

template <std::size_t Rank>
std::string shape_name(const std::array<int, Rank>& e) {
  std::string s;
  for (std::size_t i = 0; i < Rank; ++i) s += (i ? "x" : "") + std::to_string(e[i]);
  return s;
}

template <std::size_t Rank>
double voxels(const std::array<int, Rank>& e) {
  double v = 1;
  for (int x : e) v *= x;
  return v;
}

// Large shapes are skipped on host backends unless KSSIM_BENCH_ALL=1.
inline bool run_all_shapes() {
  const char* v = std::getenv("KSSIM_BENCH_ALL");
  return v != nullptr && std::string(v) == "1";
}
inline constexpr double host_voxel_limit = double(1 << 23);

template <class ExecSpace, std::size_t Rank>
bool shape_enabled(const std::array<int, Rank>& e) {
  return !is_host_space_v<ExecSpace> || run_all_shapes() || voxels(e) <= host_voxel_limit;
}

template <class T>
const char* dtype_name() {
  return kssim::impl::storage_name<T>();
}

// The benchmark loop: each call of step() is fenced before and after and timed with Kokkos::Timer (manual
// time). Returns the mean seconds per iteration.
template <class Step>
double timed_iterations(benchmark::State& state, const Step& step) {
  double seconds = 0;
  for (auto _ : state) {
    Kokkos::fence("kssim_perf: before");
    Kokkos::Timer timer;
    step();
    Kokkos::fence("kssim_perf: after");
    const double t = timer.seconds();
    state.SetIterationTime(t);
    seconds += t;
  }
  return state.iterations() > 0 ? seconds / double(state.iterations()) : 0;
}

template <class ExecSpace, class Step>
void peer_style_counters(benchmark::State& state, const ExecSpace& exec, const Step& step) {
  constexpr int count = 20;
  state.counters["us_b2b"] = benchmark::Counter(back_to_back_seconds(exec, step, count) * 1e6);
  state.counters["us_flushed"] = benchmark::Counter(flushed_seconds(exec, step, count) * 1e6);
}

// One benchmark: the SSIM object and the images are set up outside the timed loop; each iteration is
// fenced before and after and timed with Kokkos::Timer (manual time).
template <class ExecSpace, class T, int Rank>
void bench_ssim(benchmark::State& state, std::array<int, Rank> extents, kssim::Padding padding, Mode mode,
                kssim::Schedule schedule, kssim::Window window = kssim::Window::Exact) {
  using Mem = typename ExecSpace::memory_space;
  using DataType = std::conditional_t<Rank == 4, T****, T*****>;
  // LayoutRight: contiguous along W, as PyTorch's NCHW / NCDHW tensors (the GPU default, LayoutLeft, is not).
  using View = Kokkos::View<DataType, Kokkos::LayoutRight, Mem>;
  try {
    ExecSpace exec;
    kssim::Options opts;
    opts.padding = padding;
    opts.schedule = schedule;
    opts.window = window;
    const auto layout = [&] {
      Kokkos::LayoutRight l;
      for (int i = 0; i < Rank; ++i) l.dimension[i] = std::size_t(extents[i]);
      return l;
    }();
    View img1(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "img1"), layout);
    View img2(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "img2"), layout);
    View grad1, grad2;
    if (mode != Mode::Forward) grad1 = View(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "grad1"), layout);
    if (mode == Mode::ForwardBackward2)
      grad2 = View(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "grad2"), layout);
    {
      // Random images in [0, 1): never time zeros.
      fill_uniform(exec, img1.data(), img1.size(), 20261129);
      fill_uniform(exec, img2.data(), img2.size(), 20261130);
    }
    kssim::SSIM<ExecSpace, T, Rank> loss(exec, extents, opts, gradients_of(mode));

    auto step = [&] {
      loss.forward(img1, img2);
      if (mode == Mode::ForwardBackward) loss.backward(grad1);
      if (mode == Mode::ForwardBackward2) loss.backward(grad1, grad2);
    };
    step();  // warm-up: first-touch of the workspace, module load on GPUs
    Kokkos::fence("kssim_perf: warm-up");
    const double value = loss.value_on_host();
    if (!std::isfinite(value) || value < -1.0 || value > 1.0) {
      state.SkipWithError(("SSIM out of range: " + std::to_string(value)).c_str());
      return;
    }

    const double per_iter = timed_iterations(state, step);
    peer_style_counters(state, exec, step);
    const Work w = work_model(extents, opts.window_size, padding, mode, sizeof(kssim::compute_type_t<T>), sizeof(T));
    state.counters["us"] = benchmark::Counter(per_iter * 1e6);
    state.counters["GB/s"] = benchmark::Counter(per_iter > 0 ? w.bytes / per_iter / 1e9 : 0);
    state.counters["GFLOP/s"] = benchmark::Counter(per_iter > 0 ? w.flops / per_iter / 1e9 : 0);
    state.counters["Mvoxel/s"] = benchmark::Counter(per_iter > 0 ? voxels(extents) / per_iter / 1e6 : 0);
    state.counters["bytes_model"] = benchmark::Counter(w.bytes);
    state.counters["flops_model"] = benchmark::Counter(w.flops);
    state.SetLabel(std::string(ExecSpace::name()) + " ssim=" + std::to_string(value));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Registers every mode x padding of one value type for one shape on one execution space: the router's
// choice under the plain family name (what a user gets), and each schedule forced, under "<family>@stages"
// and "<family>@fused" (the measurements behind the router, perf_tests/README.md, "Schedules and the router"; volumes: the slice-fused
// schedule, where this backend has it for T).
template <class ExecSpace, class T, int Rank>
void register_value_type(const char* family, const std::array<int, Rank>& extents) {
  std::vector<kssim::Schedule> schedules{kssim::Schedule::Auto, kssim::Schedule::Stages};
  if (Rank == 4 || kssim::impl::fused_slices_compiled<ExecSpace, T>(11)) schedules.push_back(kssim::Schedule::Fused);
  for (kssim::Schedule schedule : schedules)
    for (Mode mode : all_modes) {
      for (kssim::Padding padding : all_paddings) {
        const std::string name =
            std::string(family) + (schedule == kssim::Schedule::Auto ? "" : std::string("@") + kssim::to_string(schedule)) +
            "/" + mode_name(mode) + "/" + dtype_name<T>() + "/" + kssim::to_string(padding) + "/" + shape_name(extents) +
            "/" + ExecSpace::name();
        benchmark::RegisterBenchmark(name.c_str(), [extents, padding, mode, schedule](benchmark::State& st) {
          bench_ssim<ExecSpace, T, Rank>(st, extents, padding, mode, schedule);
        })->UseManualTime()->Unit(benchmark::kMicrosecond);
      }
    }
}

// fused-ssim's drop-in (kssim.fused_ssim) runs SSIM with Window::Float32 by default: the same kernels are
// timed here in C++, float, forward and forward + backward, the router's schedule, under "<family>-float32",
// so that the binding's overhead is the PyTorch time minus the C++ time of the kernels it launches
// (perf_tests/make_torch_table.py).
template <class ExecSpace, int Rank>
void register_float32_window(const char* family, const std::array<int, Rank>& extents) {
  if (!shape_enabled<ExecSpace>(extents)) return;
  for (Mode mode : {Mode::Forward, Mode::ForwardBackward})
    for (kssim::Padding padding : all_paddings) {
      const std::string name = std::string(family) + "-float32/" + mode_name(mode) + "/float/" +
                               kssim::to_string(padding) + "/" + shape_name(extents) + "/" + ExecSpace::name();
      benchmark::RegisterBenchmark(name.c_str(), [extents, padding, mode](benchmark::State& st) {
        bench_ssim<ExecSpace, float, Rank>(st, extents, padding, mode, kssim::Schedule::Auto, kssim::Window::Float32);
      })->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
}

// A 16-bit type S usable on ExecSpace (void: none in this build).
template <class ExecSpace, class S>
inline constexpr bool usable_16bit_v =
    kssim::is_16bit_storage_v<S> && (!kssim::impl::is_host_16bit_v<S> || !kssim::impl::is_gpu_space_v<ExecSpace>);

template <class ExecSpace, int Rank>
void register_shape(const char* family, const std::array<int, Rank>& extents) {
  if (!shape_enabled<ExecSpace>(extents)) return;
  register_value_type<ExecSpace, float, Rank>(family, extents);
  register_value_type<ExecSpace, double, Rank>(family, extents);
  if constexpr (Rank == 4) {  // 16-bit images: Kokkos' types where it has them, else the host compiler's
    using Half = std::conditional_t<usable_16bit_v<ExecSpace, kssim::kokkos_half_t>, kssim::kokkos_half_t,
                                    kssim::host_float16_t>;
    using BHalf = std::conditional_t<usable_16bit_v<ExecSpace, kssim::kokkos_bhalf_t>, kssim::kokkos_bhalf_t,
                                     kssim::host_bfloat16_t>;
    if constexpr (usable_16bit_v<ExecSpace, Half>) register_value_type<ExecSpace, Half, Rank>(family, extents);
    if constexpr (usable_16bit_v<ExecSpace, BHalf>) register_value_type<ExecSpace, BHalf, Rank>(family, extents);
  }
}

// register_on(space) for the default execution space, and for the default host space when it differs: every
// benchmark family runs on both.
template <class RegisterOn>
void on_default_spaces(const RegisterOn& register_on) {
  register_on(Kokkos::DefaultExecutionSpace{});
  if constexpr (!std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>)
    register_on(Kokkos::DefaultHostExecutionSpace{});
}

// f(float{}) then f(double{}): the value types of the float-and-double benchmark families.
template <class F>
void for_float_and_double(const F& f) {
  f(float{});
  f(double{});
}

template <int Rank>
void register_shapes(const char* family, const std::vector<std::array<int, Rank>>& shapes) {
  on_default_spaces([&](auto space) {
    for (const auto& e : shapes) register_shape<decltype(space), Rank>(family, e);
  });
}
template <int Rank>
void register_float32_window_shapes(const char* family, const std::vector<std::array<int, Rank>>& shapes) {
  on_default_spaces([&](auto space) {
    for (const auto& e : shapes) register_float32_window<decltype(space), Rank>(family, e);
  });
}

void register_ssim2d_benchmarks();
void register_ssim3d_benchmarks();
void register_stage_benchmarks();  // PerfStages.cpp
void register_metric_benchmarks();  // PerfMetrics.cpp: MS-SSIM and masked SSIM
void register_l1_ssim_benchmarks();  // PerfL1Ssim.cpp: the fused L1 + SSIM loss

}  // namespace kssim_perf
