#pragma once
// The fused L1 + SSIM training loss of 3D Gaussian Splatting and its gradients, computed inside the SSIM
// kernels: the sum of |x - y| where the first forward kernel reads the images, its gradient added where the
// last backward kernel stores (impl/L1Term.hpp), so it costs no pass of its own over the images.
//
//   loss = a * mean|x - y| + (1 - a) * (1 - SSIM(x, y))        (a = L1SsimOptions::l1_weight, default 0.8)
//
//   double l = kssim::l1_ssim_loss(exec, img1, img2);                 // synchronises
//   kssim::l1_ssim_loss(exec, img1, img2, loss_view, opts);           // rank-0 View, no synchronisation
//   double l = kssim::l1_ssim_loss_grad(exec, img1, img2, grad1, grad2, opts);  // either gradient may be {}
//   kssim::L1SSIMLoss<Exec, float> loss(exec, {N, C, H, W});          // training loops, like kssim::SSIM
//
// mean|x - y| is over every pixel of every (n, c) slice; SSIM is kssim::ssim with opts.ssim (Same padding by
// default, as 3DGS). d|x - y|/dx = sign(x - y) with sign(0) = 0, as PyTorch's; NaN pixels give NaN.

#include <kssim/Functions.hpp>
#include <kssim/L1SsimOptions.hpp>
#include <kssim/SSIM.hpp>
#include <kssim/impl/HostValue.hpp>
#include <kssim/impl/Plan.hpp>
#include <kssim/impl/PlanCache.hpp>
#include <kssim/impl/TrainingArgs.hpp>

#include <Kokkos_Core.hpp>
#include <array>

namespace kssim {

// The loss written into a rank-0 View, without synchronising the host.
template <class ExecSpace, class View1, class View2, class LossView>
  requires Kokkos::is_view_v<LossView>
void l1_ssim_loss(const ExecSpace& exec, const View1& img1, const View2& img2, const LossView& loss,
                  const L1SsimOptions& opts = {}) {
  check_result_view<ExecSpace, LossView, 0>();
  validate(opts);
  impl::ImagePair<ExecSpace, View1, View2> p(img1, img2, opts.ssim);
  using T = typename decltype(p)::T;
  const auto plan = impl::cached_plan<ExecSpace, T>(exec, p.g, opts.ssim, {}, impl::WithL1::Yes);
  plan->forward(exec, p.x, p.y, {}, opts.l1_weight);
  impl::write_mean(exec, plan->loss(), 1.0, loss);
}

// The loss, returned on the host (this synchronises `exec`).
template <class ExecSpace, class View1, class View2>
double l1_ssim_loss(const ExecSpace& exec, const View1& img1, const View2& img2, const L1SsimOptions& opts = {}) {
  validate(opts);
  impl::ImagePair<ExecSpace, View1, View2> p(img1, img2, opts.ssim);
  using T = typename decltype(p)::T;
  const auto plan = impl::cached_plan<ExecSpace, T>(exec, p.g, opts.ssim, {}, impl::WithL1::Yes);
  plan->forward(exec, p.x, p.y, {}, opts.l1_weight);
  return impl::host_value(exec, plan->loss(), "kssim::l1_ssim_loss: wait for the loss");
}

// The loss (returned, synchronising) and its gradients with respect to img1 and img2. Pass {} or an empty
// View to skip a gradient and its cost.
template <class ExecSpace, class View1, class View2, class Grad1 = impl::writable_like_t<View1>,
          class Grad2 = Grad1>
double l1_ssim_loss_grad(const ExecSpace& exec, const View1& img1, const View2& img2, const Grad1& grad1,
                         const Grad2& grad2 = {}, const L1SsimOptions& opts = {}) {
  check_output_view<ExecSpace, Grad1>();
  check_output_view<ExecSpace, Grad2>();
  check_same_kind<View1, Grad1>();
  check_same_kind<View1, Grad2>();
  validate(opts);
  impl::ImagePair<ExecSpace, View1, View2> p(img1, img2, opts.ssim);
  using T = typename decltype(p)::T;
  using Out = impl::OutputArray<T>;
  const auto extents = impl::extents_of(img1);
  impl::PartialPlanes wanted{!impl::is_empty_view(grad1), !impl::is_empty_view(grad2)};
  if (wanted.image1) impl::require_extents("grad1", grad1, extents);
  if (wanted.image2) impl::require_extents("grad2", grad2, extents);
  const auto plan = impl::cached_plan<ExecSpace, T>(exec, p.g, opts.ssim, wanted, impl::WithL1::Yes);
  plan->forward(exec, p.x, p.y, {}, opts.l1_weight);
  plan->backward(exec, p.x, p.y, wanted.image1 ? impl::as_rank5<Out>(grad1) : Out{},
                 wanted.image2 ? impl::as_rank5<Out>(grad2) : Out{}, -(1 - opts.l1_weight), nullptr, false, nullptr,
                 opts.l1_weight);
  return impl::host_value(exec, plan->loss(), "kssim::l1_ssim_loss_grad: wait for the loss");
}

// A reusable L1 + SSIM loss for one image shape, for training loops: the constructor allocates the whole
// workspace; forward() and backward() then allocate nothing and never synchronise the host.
//
//   kssim::L1SSIMLoss<Kokkos::Cuda, float> loss(exec, {N, C, H, W});   // gradient of image 1 by default
//   loss.forward(render, target);                                      // loss.value(): rank-0 device View
//   loss.backward(grad_render);                                        // d loss / d render
//
// backward() uses the images of the last forward(): keep them alive and unchanged in between.
template <class ExecutionSpace, class ValueType, int Rank = 4>
class L1SSIMLoss {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>,
                "kssim::L1SSIMLoss: ExecutionSpace must be an execution space");
  static_assert(std::is_same_v<ValueType, float> || std::is_same_v<ValueType, double>,
                "kssim::L1SSIMLoss: ValueType must be float or double");
  static_assert(Rank == 4 || Rank == 5, "kssim::L1SSIMLoss: Rank is 4 (N, C, H, W) or 5 (N, C, D, H, W)");

 public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using value_type = ValueType;

  L1SSIMLoss(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const L1SsimOptions& opts = {},
             Gradients gradients = Gradients::Image1)
      : exec_(exec),
        args_{extents},
        weight_((validate(opts), opts.l1_weight)),
        plan_(exec, impl::make_geometry<Rank>(extents, opts.ssim), opts.ssim,
              impl::PartialPlanes{gradients == Gradients::Image1 || gradients == Gradients::Both,
                                  gradients == Gradients::Image2 || gradients == Gradients::Both},
              true, impl::WithL1::Yes) {}

  const std::array<int, Rank>& extents() const { return args_.extents; }
  double l1_weight() const { return weight_; }

  // Computes the loss into value() (and SSIM into ssim_value()). No host synchronisation.
  template <class View1, class View2>
  void forward(const View1& img1, const View2& img2) {
    args_.check_images(img1, img2);
    x_ = impl::as_rank5<impl::InputArray<ValueType>>(img1);
    y_ = impl::as_rank5<impl::InputArray<ValueType>>(img2);
    plan_.forward(exec_, x_, y_, {}, weight_);
    has_forward_ = true;
  }

  // The loss of the last forward(), on the device; its mean SSIM, and its sum of |x - y| over every pixel.
  Kokkos::View<const double, memory_space> value() const { return plan_.loss(); }
  Kokkos::View<const double, memory_space> ssim_value() const { return plan_.mean(); }
  Kokkos::View<const double, memory_space> l1_sum() const { return plan_.l1_total(); }
  // The loss, copied to the host (synchronises).
  double value_on_host() const { return impl::host_value(exec_, plan_.loss(), "kssim::L1SSIMLoss::value_on_host"); }

  // Gradients of upstream * loss with respect to the images of the last forward(). Either gradient View may
  // be empty. `upstream` is a host factor or a rank-0 device View<double>.
  template <class Grad1, class Grad2 = impl::writable_like_t<Grad1>>
    requires(Grad1::rank() != 0)
  void backward(const Grad1& grad1, const Grad2& grad2 = {}, Accumulate mode = Accumulate::No,
                double upstream = 1.0) {
    run_backward(grad1, grad2, mode, upstream, nullptr);
  }
  template <class Grad1, class Grad2 = impl::writable_like_t<Grad1>>
  void backward(const Kokkos::View<const double, memory_space>& upstream, const Grad1& grad1,
                const Grad2& grad2 = {}, Accumulate mode = Accumulate::No) {
    run_backward(grad1, grad2, mode, 1.0, upstream.data());
  }

 private:
  template <class Grad1, class Grad2>
  void run_backward(const Grad1& grad1, const Grad2& grad2, Accumulate mode, double scale, const double* upstream) {
    if (!has_forward_) throw std::logic_error("kssim::L1SSIMLoss: backward() called before forward()");
    // d loss = a d mean|x - y| - (1 - a) d SSIM.
    plan_.backward(exec_, x_, y_, args_.gradient("grad1", grad1), args_.gradient("grad2", grad2),
                   -(1 - weight_) * scale, upstream, mode == Accumulate::Yes, nullptr, weight_ * scale);
  }

  ExecutionSpace exec_;
  impl::TrainingArgs<ExecutionSpace, ValueType, Rank> args_;
  double weight_;
  impl::Plan<ExecutionSpace, ValueType> plan_;
  impl::InputArray<ValueType> x_, y_;
  bool has_forward_ = false;
};

}  // namespace kssim
