// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The fused L1 + SSIM loss (issue 17 item 3): the training object kssim::L1SSIMLoss on the 2D shapes of the
// SSIM benchmarks, beside the same loss computed unfused (kssim::SSIM, then L1 in kernels of its own):
//
//   l1ssim2d[@stages|@fused]/<fwd|fwd+bwd>/<dtype>/<padding>/<shape>/<space>   kssim::L1SSIMLoss (a = 0.8)
//   l1ssim2d@separate/<fwd|fwd+bwd>/<dtype>/<padding>/<shape>/<space>          kssim::SSIM + separate L1 passes
//
// Compare with ssim2d/<mode>/<dtype>/<padding>/<shape>/<space> (SSIM alone, PerfSSIM2D.cpp). The separate L1
// passes are what a training loop without the fused loss runs: a reduction of |x - y| after the SSIM forward,
// and a kernel adding a sign(x - y) / numel to the gradient after the SSIM backward (PyTorch's
// 0.8 * (x - y).abs().mean() + 0.2 * (1 - ssim) runs more: abs, mean, and their backward, as separate kernels).
// Images random in [0, 1), set up outside the timed loop; each iteration fenced and timed like bench_ssim.
#include "PerfSSIM.hpp"

namespace kssim_perf {
namespace {

using Image = std::array<int, 4>;
constexpr double l1_weight = 0.8;  // 3D Gaussian Splatting's

template <class ExecSpace, class T>
using View4 = Kokkos::View<T****, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

// The unfused loss: kssim::SSIM, then |x - y| summed by a reduction of its own, the loss combined on the
// device; backward: SSIM's gradient scaled by -(1 - a), then a kernel adding a sign(x - y) / numel.
template <class ExecSpace, class T>
struct SeparateLoss {
  kssim::SSIM<ExecSpace, T> ssim;
  Kokkos::View<double, typename ExecSpace::memory_space> l1, loss;
  std::size_t count;

  SeparateLoss(const ExecSpace& exec, const Image& e, const kssim::Options& opts, kssim::Gradients g)
      : ssim(exec, e, opts, g), l1("l1"), loss("loss"), count(std::size_t(e[0]) * e[1] * e[2] * e[3]) {}

  void forward(const ExecSpace& exec, const View4<ExecSpace, T>& x, const View4<ExecSpace, T>& y) {
    ssim.forward(x, y);
    const T *xp = x.data(), *yp = y.data();  // pointers, never Views, in kernels (KernelArrays.hpp)
    Kokkos::parallel_reduce(
        "kssim_perf::l1_sum", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
        KOKKOS_LAMBDA(std::size_t i, double& acc) { acc += Kokkos::abs(double(xp[i]) - double(yp[i])); }, l1);
    const double *l1p = l1.data(), *sp = ssim.value().data();
    double* out = loss.data();
    const double n = double(count);
    Kokkos::parallel_for(
        "kssim_perf::l1_ssim_combine", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
        KOKKOS_LAMBDA(int) { *out = l1_weight * (*l1p / n) + (1 - l1_weight) * (1 - *sp); });
  }

  void backward(const ExecSpace& exec, const View4<ExecSpace, T>& x, const View4<ExecSpace, T>& y,
                const View4<ExecSpace, T>& g) {
    ssim.backward(g, {}, kssim::Accumulate::No, -(1 - l1_weight));
    const T *xp = x.data(), *yp = y.data();
    T* gp = g.data();
    const T f = T(l1_weight / double(count));
    Kokkos::parallel_for(
        "kssim_perf::l1_gradient", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), KOKKOS_LAMBDA(std::size_t i) {
          const T d = xp[i] - yp[i];
          gp[i] += d > T(0) ? f : d < T(0) ? -f : T(0);
        });
  }
};

template <class ExecSpace, class T>
void bench_l1_ssim(benchmark::State& state, Image e, kssim::Padding padding, Mode mode, kssim::Schedule schedule,
                   bool separate) {
  try {
    ExecSpace exec;
    using V = View4<ExecSpace, T>;
    V x(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "img1"), e[0], e[1], e[2], e[3]);
    V y(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "img2"), e[0], e[1], e[2], e[3]);
    fill_uniform(exec, x.data(), x.size(), 20261129);
    fill_uniform(exec, y.data(), y.size(), 20261130);
    V g;
    if (mode != Mode::Forward) g = V(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "grad1"), e[0], e[1], e[2], e[3]);
    kssim::L1SSIMLossOptions opts;
    opts.ssim.padding = padding;
    opts.ssim.schedule = schedule;
    opts.l1_weight = l1_weight;
    std::optional<kssim::L1SSIMLoss<ExecSpace, T>> fused;
    std::optional<SeparateLoss<ExecSpace, T>> unfused;
    if (separate)
      unfused.emplace(exec, e, opts.ssim, gradients_of(mode));
    else
      fused.emplace(exec, e, opts, gradients_of(mode));
    const auto step = [&] {
      if (fused) {
        fused->forward(x, y);
        if (mode != Mode::Forward) fused->backward(g);
      } else {
        unfused->forward(exec, x, y);
        if (mode != Mode::Forward) unfused->backward(exec, x, y, g);
      }
    };
    step();
    Kokkos::fence("kssim_perf: warm-up");
    using Mem = typename ExecSpace::memory_space;
    const Kokkos::View<const double, Mem> loss = fused ? fused->value() : unfused->loss;
    const double value = kssim::impl::host_value(exec, loss, "kssim_perf: value");
    if (!std::isfinite(value) || value < 0.0 || value > 2.0) {
      state.SkipWithError(("loss out of range: " + std::to_string(value)).c_str());
      return;
    }
    const double per_iter = timed_iterations(state, step);
    peer_style_counters(state, exec, step);
    state.counters["us"] = benchmark::Counter(per_iter * 1e6);
    state.counters["Mvoxel/s"] = benchmark::Counter(per_iter > 0 ? voxels(e) / per_iter / 1e6 : 0);
    state.SetLabel(std::string(ExecSpace::name()) + " loss=" + std::to_string(value));
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

template <class ExecSpace, class T>
void register_l1_ssim_for(const Image& e) {
  if (!shape_enabled<ExecSpace>(e)) return;
  struct Variant {
    const char* suffix;
    kssim::Schedule schedule;
    bool separate;
  };
  const Variant variants[] = {{"", kssim::Schedule::Auto, false},
                              {"@stages", kssim::Schedule::Stages, false},
                              {"@fused", kssim::Schedule::Fused, false},
                              {"@separate", kssim::Schedule::Auto, true}};
  for (const Variant& v : variants)
    for (Mode mode : {Mode::Forward, Mode::ForwardBackward})
      for (kssim::Padding padding : all_paddings) {
        const std::string name = std::string("l1ssim2d") + v.suffix + "/" + mode_name(mode) + "/" + dtype_name<T>() +
                                 "/" + kssim::to_string(padding) + "/" + shape_name(e) + "/" + ExecSpace::name();
        benchmark::RegisterBenchmark(name.c_str(), [e, padding, mode, v](benchmark::State& st) {
          bench_l1_ssim<ExecSpace, T>(st, e, padding, mode, v.schedule, v.separate);
        })->UseManualTime()->Unit(benchmark::kMicrosecond);
      }
}

}  // namespace

void register_l1_ssim_benchmarks() {
  on_default_spaces([](auto space) {
    // The shapes of ssim2d (PerfSSIM2D.cpp).
    for (const Image& e : {Image{1, 3, 1080, 1920}, Image{1, 3, 2160, 3840}, Image{8, 3, 512, 512},
                           Image{1, 1, 4096, 4096}, Image{64, 1, 128, 128}})
      for_float_and_double([&](auto value) { register_l1_ssim_for<decltype(space), decltype(value)>(e); });
  });
}

}  // namespace kssim_perf
