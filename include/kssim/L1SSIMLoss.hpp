// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The fused L1 + SSIM training loss of 3D Gaussian Splatting and its gradients, computed inside the SSIM
// kernels: the sum of |x - y| where the first forward kernel reads the images, its gradient added where the
// last backward kernel stores (impl/stages/L1Term.hpp), so it costs no pass of its own over the images.
//
//   loss = a * mean|x - y| + (1 - a) * (1 - SSIM(x, y))        (a = L1SSIMLossOptions::l1_weight, default 0.8)
//
//   double l = kssim::l1_ssim_loss(exec, img1, img2);                 // synchronises
//   kssim::l1_ssim_loss(exec, img1, img2, loss_view, opts);           // rank-0 View, no synchronisation
//   double l = kssim::l1_ssim_loss_grad(exec, img1, img2, grad1, grad2, opts);  // either gradient may be {}
//   kssim::L1SSIMLoss<Exec, float> loss(exec, {N, C, H, W});          // training loops, like kssim::SSIM
//
// Images of float, double or a 16-bit type, with maps and gradients of their type or float, as for kssim::ssim
// (kssim/SSIM.hpp); both terms are computed in float for 16-bit images.
//
// mean|x - y| is over every pixel of every (n, c) slice; SSIM is kssim::ssim with opts.ssim (Same padding by
// default, as 3DGS). d|x - y|/dx = sign(x - y) with sign(0) = 0, as PyTorch's; NaN pixels give NaN.

#include <kssim/L1SSIMLossOptions.hpp>
#include <kssim/impl/core/OneCall.hpp>
#include <kssim/impl/core/HostValue.hpp>
#include <kssim/impl/ssim/Plan.hpp>
#include <kssim/impl/ssim/PlanCache.hpp>
#include <kssim/impl/core/TrainingObject.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <memory>
#include <stdexcept>

namespace kssim {
namespace impl {

// The cached plan (PlanCache.hpp) of a one-call loss after its forward pass over (img1, img2); the options
// are validated first. O: the gradients' type (16-bit images: theirs or float).
template <class ExecutionSpace, class View1, class View2, class O = value_type_of<View1>>
struct L1SsimCall {
  ImagePair<ExecutionSpace, View1, View2> p;
  using Images = decltype(p);
  std::shared_ptr<const Plan<ExecutionSpace, typename Images::T, SsimTerm, typename Images::S, O>> plan;

  L1SsimCall(const ExecutionSpace& exec, const View1& img1, const View2& img2, const L1SSIMLossOptions& opts,
             PartialPlanes wanted = {})
      : p((validate(opts), img1), img2, opts.ssim),
        plan(cached_plan<ExecutionSpace, typename Images::T, typename Images::S, O>(exec, p.g, opts.ssim, wanted,
                                                                                    WithL1::Yes)) {
    plan->forward(exec, p.x, p.y, {}, {.l1_weight = opts.l1_weight});
  }
};

}  // namespace impl

// The loss written into a rank-0 View, without synchronising the host.
template <class ExecutionSpace, class View1, class View2, class LossView>
  requires Kokkos::is_view_v<LossView>
void l1_ssim_loss(const ExecutionSpace& exec, const View1& img1, const View2& img2, const LossView& loss,
                  const L1SSIMLossOptions& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, LossView, 0>());
  impl::write_mean(exec, impl::L1SsimCall<ExecutionSpace, View1, View2>(exec, img1, img2, opts).plan->loss(), 1.0,
                   loss);
}

// The loss, returned on the host (this synchronises `exec`).
template <class ExecutionSpace, class View1, class View2>
double l1_ssim_loss(const ExecutionSpace& exec, const View1& img1, const View2& img2,
                    const L1SSIMLossOptions& opts = {}) {
  impl::L1SsimCall<ExecutionSpace, View1, View2> c(exec, img1, img2, opts);
  return impl::host_value(exec, c.plan->loss(), "kssim::l1_ssim_loss: wait for the loss");
}

// The loss (returned, synchronising) and its gradients with respect to img1 and img2. Pass {} or an empty
// View to skip a gradient and its cost.
template <class ExecutionSpace, class View1, class View2, class Grad1 = impl::writable_like_t<View1>,
          class Grad2 = Grad1>
double l1_ssim_loss_grad(const ExecutionSpace& exec, const View1& img1, const View2& img2, const Grad1& grad1,
                         const Grad2& grad2 = {}, const L1SSIMLossOptions& opts = {}) {
  impl::GradientArgs<ExecutionSpace, View1, Grad1, Grad2> g(img1, grad1, grad2);
  impl::L1SsimCall<ExecutionSpace, View1, View2, typename decltype(g)::O> c(exec, img1, img2, opts, g.wanted);
  // d loss = a d mean|x - y| - (1 - a) d SSIM.
  c.plan->backward(exec, c.p.x, c.p.y, {.grad1 = g.g1, .grad2 = g.g2, .scale = -(1 - opts.l1_weight)},
                   {.l1_scale = opts.l1_weight});
  return impl::host_value(exec, c.plan->loss(), "kssim::l1_ssim_loss_grad: wait for the loss");
}

// A reusable L1 + SSIM loss for one image shape, for training loops: the constructor allocates the whole
// workspace; forward() and backward() then allocate nothing and never synchronise the host.
//
//   kssim::L1SSIMLoss<Kokkos::Cuda, float> loss(exec, {N, C, H, W});   // gradient of image 1 by default
//   loss.forward(render, target);                                      // loss.value(): rank-0 device View
//   loss.backward(grad_render);                                        // d loss / d render
//
// backward() uses the images of the last forward(): keep them alive and unchanged in between. 16-bit images and
// OutputType as kssim::SSIM's (the L1 term reads the 16-bit pixels; gradients rounded once, after both terms).
template <class ExecutionSpace, class ValueType, int Rank = 4, class OutputType = ValueType>
class L1SSIMLoss : public impl::TrainingObject<L1SSIMLoss<ExecutionSpace, ValueType, Rank, OutputType>, ExecutionSpace,
                                               ValueType, Rank, OutputType> {
  using Shell = impl::TrainingObject<L1SSIMLoss, ExecutionSpace, ValueType, Rank, OutputType>;
  friend Shell;
  using typename Shell::Images;
  using typename Shell::Outputs;
  using typename Shell::Targets;

 public:
  using typename Shell::memory_space;

  L1SSIMLoss(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const L1SSIMLossOptions& opts = {},
             Gradients gradients = Gradients::Image1)
      : Shell("kssim::L1SSIMLoss", exec, extents),
        weight_((validate(opts), opts.l1_weight)),
        plan_(exec, impl::make_geometry<Rank>(extents, opts.ssim), opts.ssim, impl::planes_for(gradients), true,
              impl::WithL1::Yes) {}

  double l1_weight() const { return weight_; }

  // Computes the loss into value() (and SSIM into ssim_value()). No host synchronisation.
  template <class View1, class View2>
  void forward(const View1& img1, const View2& img2) {
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, {}, {.l1_weight = weight_});
    });
  }

  // forward() that also writes the loss, rounded once to float, to `value` (one float in memory_space), from
  // the kernel that computes it.
  template <class View1, class View2>
  void forward_into(const View1& img1, const View2& img2, float* value) {
    float* const out = this->value_pointer(value);
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, {}, {.l1_weight = weight_, .value_float = out});
    });
  }

  // The loss of the last forward(), on the device; its mean SSIM, and its sum of |x - y| over every pixel.
  Kokkos::View<const double, memory_space> value() const { return plan_.loss(); }
  Kokkos::View<const double, memory_space> ssim_value() const { return plan_.mean(); }
  Kokkos::View<const double, memory_space> l1_sum() const { return plan_.l1_total(); }

  // backward(): gradients of upstream * loss, as SSIM::backward (impl/core/TrainingObject.hpp).

 private:
  void backward_arrays(const ExecutionSpace& exec, const Images& x, const Images& y,
                       const Targets& out) {
    // d loss = a d mean|x - y| - (1 - a) d SSIM.
    Targets ssim_part = out;
    ssim_part.scale = -(1 - weight_) * out.scale;
    plan_.backward(exec, x, y, ssim_part, {.l1_scale = weight_ * out.scale});
  }

  double weight_;
  impl::Plan<ExecutionSpace, compute_type_t<ValueType>, impl::SsimTerm, ValueType, OutputType> plan_;
};

}  // namespace kssim
