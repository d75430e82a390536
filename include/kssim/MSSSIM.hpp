// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// MS-SSIM (multi-scale SSIM, Wang, Simoncelli and Bovik 2003) with pytorch-msssim's conventions and its
// gradients with respect to both images. Images of float, double or a 16-bit type, with gradients of their type
// or float, as for kssim::ssim (kssim/SSIM.hpp; 16-bit images: impl/msssim/FinestScale.hpp).
//
//   double v = kssim::ms_ssim(exec, img1, img2);                        // mean over N and C, synchronises
//   kssim::ms_ssim(exec, img1, img2, mean_view, opts);                  // rank-0 View, no synchronisation
//   kssim::ms_ssim_per_image(exec, img1, img2, per_image);              // (N)
//   kssim::ms_ssim_per_channel(exec, img1, img2, per_channel);          // (N, C)
//   double v = kssim::ms_ssim_grad(exec, img1, img2, grad1, grad2);     // either gradient may be {}
//   kssim::MSSSIM<Exec, float> loss(exec, {N, C, H, W});                // training loops, like kssim::SSIM
//
// Per (n, c) slice, with S scales (default 5) and weights w_k (default 0.0448, 0.2856, 0.3001, 0.2363,
// 0.1333): scale 1 is the image, scale k+1 the 2x2 (volumes 2x2x2) average pool of scale k with zero
// padding of odd extents; cs_k is the mean of the contrast-structure map (2 cov + C2) / (v1 + v2 + C2) of
// scale k, ssim_S the mean SSIM of the last scale, both over valid windows, and
//   MS-SSIM = prod_{k<S} max(cs_k, 0)^w_k * max(ssim_S, 0)^w_S,
// averaged over slices. The clamp's gradient is 0 where it clamps. Every spatial extent must exceed
// (window_size - 1) * 2^(S - 1) (160 for the defaults), else std::invalid_argument. With
// opts.ssim.window = Window::Float32 every scale's map (cs and the last SSIM) is of that window's raw moments,
// as pytorch-msssim computes it (impl/stages/RawWindow.hpp).

#include <kssim/MSSSIMOptions.hpp>
#include <kssim/impl/core/OneCall.hpp>
#include <kssim/impl/ssim/PlanCache.hpp>
#include <kssim/impl/msssim/MsSsimPlan.hpp>
#include <kssim/impl/core/HostValue.hpp>
#include <kssim/impl/core/SliceMeans.hpp>
#include <kssim/impl/core/TrainingObject.hpp>

#include <Kokkos_Core.hpp>
#include <memory>
#include <stdexcept>

namespace kssim {
namespace impl {

// What makes two MS-SSIM problems the same plan (PlanCache.hpp).
struct MsSsimPlanKey {
  Geometry g;
  MSSSIMOptions opts;
  PartialPlanes wanted;
  friend bool operator==(const MsSsimPlanKey& a, const MsSsimPlanKey& b) {
    return same_problem(a.g, b.g) && same_options(a.opts.ssim, b.opts.ssim) && a.opts.weights == b.opts.weights &&
           a.wanted.image1 == b.wanted.image1 && a.wanted.image2 == b.wanted.image2;
  }
};

// The plan of a one-call MS-SSIM function after its forward pass over (img1, img2), kept between calls like
// SSIM's (PlanCache.hpp); the options are validated first. O: the gradients' type (16-bit images: theirs or
// float).
template <class ExecutionSpace, class View1, class View2, class O = value_type_of<View1>>
struct MsSsimCall {
  using Images = ImagePair<ExecutionSpace, View1, View2>;
  using PlanT = MsSsimPlan<ExecutionSpace, typename Images::T, typename Images::S, O>;
  Images p;
  std::shared_ptr<const PlanT> plan;

  MsSsimCall(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MSSSIMOptions& opts,
             PartialPlanes wanted = {})
      : p((validate(opts), img1), img2, opts.ssim),
        plan(PlanCache<ExecutionSpace, PlanT, MsSsimPlanKey>::get().plan(exec, MsSsimPlanKey{p.g, opts, wanted}, [&] {
          return std::make_shared<const PlanT>(exec, p.g, opts, wanted);
        })) {
    plan->forward(exec, p.x, p.y);
  }
};

}  // namespace impl

// Mean MS-SSIM written into a rank-0 View, without synchronising the host.
template <class ExecutionSpace, class View1, class View2, class MeanView>
  requires Kokkos::is_view_v<MeanView>
void ms_ssim(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MeanView& mean,
             const MSSSIMOptions& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, MeanView, 0>());
  impl::MsSsimCall<ExecutionSpace, View1, View2> c(exec, img1, img2, opts);
  impl::write_mean(exec, c.plan->mean(), 1.0, mean);
}

// Mean MS-SSIM over N and C, returned on the host (this synchronises `exec`).
template <class ExecutionSpace, class View1, class View2>
double ms_ssim(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MSSSIMOptions& opts = {}) {
  Kokkos::View<double, typename ExecutionSpace::memory_space> mean("kssim::ms_ssim_mean");
  ms_ssim(exec, img1, img2, mean, opts);
  return impl::host_value(exec, mean, "kssim::ms_ssim: wait for the mean");
}

// MS-SSIM of each image (the mean over its channels), into a View of extent (N).
template <class ExecutionSpace, class View1, class View2, class PerImageView>
void ms_ssim_per_image(const ExecutionSpace& exec, const View1& img1, const View2& img2, const PerImageView& per_image,
                       const MSSSIMOptions& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, PerImageView, 1>());
  impl::require_extents("per_image", per_image, std::array<int, 1>{int(img1.extent(0))});
  impl::MsSsimCall<ExecutionSpace, View1, View2> c(exec, img1, img2, opts);
  impl::write_per_image(exec, impl::SliceSums{c.plan->per_slice().data(), nullptr, 1.0, c.p.g.n, c.p.g.c}, per_image);
}

// MS-SSIM of each (image, channel), into a View of extent (N, C).
template <class ExecutionSpace, class View1, class View2, class PerChannelView>
void ms_ssim_per_channel(const ExecutionSpace& exec, const View1& img1, const View2& img2,
                         const PerChannelView& per_channel, const MSSSIMOptions& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, PerChannelView, 2>());
  impl::require_extents("per_channel", per_channel, std::array<int, 2>{int(img1.extent(0)), int(img1.extent(1))});
  impl::MsSsimCall<ExecutionSpace, View1, View2> c(exec, img1, img2, opts);
  impl::write_per_channel(exec, impl::SliceSums{c.plan->per_slice().data(), nullptr, 1.0, c.p.g.n, c.p.g.c},
                          per_channel);
}

// Mean MS-SSIM (returned, synchronising) and its gradients with respect to img1 and img2. Pass {} or an
// empty View to skip a gradient and its cost.
template <class ExecutionSpace, class View1, class View2, class Grad1 = impl::writable_like_t<View1>,
          class Grad2 = Grad1>
double ms_ssim_grad(const ExecutionSpace& exec, const View1& img1, const View2& img2, const Grad1& grad1,
                    const Grad2& grad2 = {}, const MSSSIMOptions& opts = {}) {
  impl::GradientArgs<ExecutionSpace, View1, Grad1, Grad2> g(img1, grad1, grad2);
  impl::MsSsimCall<ExecutionSpace, View1, View2, typename decltype(g)::O> c(exec, img1, img2, opts, g.wanted);
  c.plan->backward(exec, c.p.x, c.p.y, {.grad1 = g.g1, .grad2 = g.g2});
  return impl::host_value(exec, c.plan->mean(), "kssim::ms_ssim_grad: wait for the mean");
}

// A reusable MS-SSIM loss for one image shape, for training loops: the constructor allocates every scale's
// workspace; forward() and backward() then allocate nothing and never synchronise the host. The interface
// is kssim::SSIM's (without the map: MS-SSIM has none), 16-bit images and OutputType included. backward() uses
// the images of the last forward().
template <class ExecutionSpace, class ValueType, int Rank = 4, class OutputType = ValueType>
class MSSSIM : public impl::TrainingObject<MSSSIM<ExecutionSpace, ValueType, Rank, OutputType>, ExecutionSpace,
                                           ValueType, Rank, OutputType> {
  using Shell = impl::TrainingObject<MSSSIM, ExecutionSpace, ValueType, Rank, OutputType>;
  friend Shell;
  using typename Shell::Images;
  using typename Shell::Outputs;
  using typename Shell::Targets;

 public:
  using typename Shell::memory_space;

  MSSSIM(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const MSSSIMOptions& opts = {},
         Gradients gradients = Gradients::Image1)
      : Shell("kssim::MSSSIM", exec, extents),
        plan_(exec, impl::make_geometry<Rank>(extents, opts.ssim), opts, impl::planes_for(gradients)) {}

  // Computes the mean MS-SSIM into value(). No host synchronisation.
  template <class View1, class View2>
  void forward(const View1& img1, const View2& img2) {
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y);
    });
  }

  // forward() that also writes the mean, rounded once to float, to `value` (one float in memory_space, e.g. a
  // framework's result tensor) from the kernel that computes it, instead of a copy of its own afterwards.
  template <class View1, class View2>
  void forward_into(const View1& img1, const View2& img2, float* value) {
    float* const out = this->value_pointer(value);
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, out);
    });
  }

  // Mean MS-SSIM of the last forward(), on the device, and per (n, c) slice: (N * C) values, n-major.
  Kokkos::View<const double, memory_space> value() const { return plan_.mean(); }
  Kokkos::View<const double*, memory_space> per_channel_values() const { return plan_.per_slice(); }

  // backward(): gradients of upstream * mean MS-SSIM, as SSIM::backward (impl/core/TrainingObject.hpp).

 private:
  void backward_arrays(const ExecutionSpace& exec, const Images& x, const Images& y,
                       const Targets& out) {
    plan_.backward(exec, x, y, out);
  }

  impl::MsSsimPlan<ExecutionSpace, compute_type_t<ValueType>, ValueType, OutputType> plan_;
};

}  // namespace kssim
