#pragma once
// MS-SSIM (multi-scale SSIM, Wang, Simoncelli and Bovik 2003) with pytorch-msssim's conventions and its
// gradients with respect to both images.
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
// (window_size - 1) * 2^(S - 1) (160 for the defaults), else std::invalid_argument.

#include <kssim/MsSsimOptions.hpp>
#include <kssim/SSIM.hpp>
#include <kssim/impl/MsSsimPlan.hpp>
#include <kssim/impl/HostValue.hpp>
#include <kssim/impl/SliceMeans.hpp>
#include <kssim/impl/TrainingArgs.hpp>

#include <Kokkos_Core.hpp>

namespace kssim {

// Mean MS-SSIM written into a rank-0 View, without synchronising the host.
template <class ExecSpace, class View1, class View2, class MeanView>
  requires Kokkos::is_view_v<MeanView>
void ms_ssim(const ExecSpace& exec, const View1& img1, const View2& img2, const MeanView& mean,
             const MsSsimOptions& opts = {}) {
  check_result_view<ExecSpace, MeanView, 0>();
  validate(opts);
  impl::ImagePair<ExecSpace, View1, View2> p(img1, img2, opts.ssim);
  impl::MsSsimPlan<ExecSpace, typename decltype(p)::T> plan(exec, p.g, opts, {});
  plan.forward(exec, p.x, p.y);
  impl::write_mean(exec, plan.mean(), 1.0, mean);
}

// Mean MS-SSIM over N and C, returned on the host (this synchronises `exec`).
template <class ExecSpace, class View1, class View2>
double ms_ssim(const ExecSpace& exec, const View1& img1, const View2& img2, const MsSsimOptions& opts = {}) {
  Kokkos::View<double, typename ExecSpace::memory_space> mean("kssim::ms_ssim_mean");
  ms_ssim(exec, img1, img2, mean, opts);
  return impl::host_value(exec, mean, "kssim::ms_ssim: wait for the mean");
}

// MS-SSIM of each image (the mean over its channels), into a View of extent (N).
template <class ExecSpace, class View1, class View2, class PerImageView>
void ms_ssim_per_image(const ExecSpace& exec, const View1& img1, const View2& img2, const PerImageView& per_image,
                       const MsSsimOptions& opts = {}) {
  check_result_view<ExecSpace, PerImageView, 1>();
  validate(opts);
  impl::ImagePair<ExecSpace, View1, View2> p(img1, img2, opts.ssim);
  impl::require_extents("per_image", per_image, std::array<int, 1>{p.g.n});
  impl::MsSsimPlan<ExecSpace, typename decltype(p)::T> plan(exec, p.g, opts, {});
  plan.forward(exec, p.x, p.y);
  impl::write_per_image(exec, impl::SliceSums{plan.per_slice().data(), nullptr, 1.0, p.g.n, p.g.c}, per_image);
}

// MS-SSIM of each (image, channel), into a View of extent (N, C).
template <class ExecSpace, class View1, class View2, class PerChannelView>
void ms_ssim_per_channel(const ExecSpace& exec, const View1& img1, const View2& img2,
                         const PerChannelView& per_channel, const MsSsimOptions& opts = {}) {
  check_result_view<ExecSpace, PerChannelView, 2>();
  validate(opts);
  impl::ImagePair<ExecSpace, View1, View2> p(img1, img2, opts.ssim);
  impl::require_extents("per_channel", per_channel, std::array<int, 2>{p.g.n, p.g.c});
  impl::MsSsimPlan<ExecSpace, typename decltype(p)::T> plan(exec, p.g, opts, {});
  plan.forward(exec, p.x, p.y);
  impl::write_per_channel(exec, impl::SliceSums{plan.per_slice().data(), nullptr, 1.0, p.g.n, p.g.c}, per_channel);
}

// Mean MS-SSIM (returned, synchronising) and its gradients with respect to img1 and img2. Pass {} or an
// empty View to skip a gradient and its cost.
template <class ExecSpace, class View1, class View2, class Grad1 = impl::writable_like_t<View1>,
          class Grad2 = Grad1>
double ms_ssim_grad(const ExecSpace& exec, const View1& img1, const View2& img2, const Grad1& grad1,
                    const Grad2& grad2 = {}, const MsSsimOptions& opts = {}) {
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
  impl::MsSsimPlan<ExecSpace, T> plan(exec, p.g, opts, wanted);
  plan.forward(exec, p.x, p.y);
  plan.backward(exec, p.x, p.y, wanted.image1 ? impl::as_rank5<Out>(grad1) : Out{},
                wanted.image2 ? impl::as_rank5<Out>(grad2) : Out{}, 1.0, nullptr, false);
  return impl::host_value(exec, plan.mean(), "kssim::ms_ssim_grad: wait for the mean");
}

// A reusable MS-SSIM loss for one image shape, for training loops: the constructor allocates every scale's
// workspace; forward() and backward() then allocate nothing and never synchronise the host. The interface
// is kssim::SSIM's (without the map: MS-SSIM has none). backward() uses the images of the last forward().
template <class ExecutionSpace, class ValueType, int Rank = 4>
class MSSSIM {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>, "kssim::MSSSIM: ExecutionSpace must be an execution space");
  static_assert(std::is_same_v<ValueType, float> || std::is_same_v<ValueType, double>,
                "kssim::MSSSIM: ValueType must be float or double");
  static_assert(Rank == 4 || Rank == 5, "kssim::MSSSIM: Rank is 4 (N, C, H, W) or 5 (N, C, D, H, W)");

 public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using value_type = ValueType;

  MSSSIM(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const MsSsimOptions& opts = {},
         Gradients gradients = Gradients::Image1)
      : exec_(exec),
        args_{extents},
        plan_(exec, impl::make_geometry<Rank>(extents, opts.ssim), opts,
              impl::PartialPlanes{gradients == Gradients::Image1 || gradients == Gradients::Both,
                                  gradients == Gradients::Image2 || gradients == Gradients::Both}) {}

  const std::array<int, Rank>& extents() const { return args_.extents; }

  // Computes the mean MS-SSIM into value(). No host synchronisation.
  template <class View1, class View2>
  void forward(const View1& img1, const View2& img2) {
    args_.check_images(img1, img2);
    x_ = impl::as_rank5<impl::InputArray<ValueType>>(img1);
    y_ = impl::as_rank5<impl::InputArray<ValueType>>(img2);
    plan_.forward(exec_, x_, y_);
    has_forward_ = true;
  }

  // Mean MS-SSIM of the last forward(), on the device, and per (n, c) slice: (N * C) values, n-major.
  Kokkos::View<const double, memory_space> value() const { return plan_.mean(); }
  Kokkos::View<const double*, memory_space> per_channel_values() const { return plan_.per_slice(); }
  // The mean, copied to the host (synchronises).
  double value_on_host() const { return impl::host_value(exec_, plan_.mean(), "kssim::MSSSIM::value_on_host"); }

  // Gradients of upstream * mean MS-SSIM with respect to the images of the last forward(); as SSIM::backward.
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
    if (!has_forward_) throw std::logic_error("kssim::MSSSIM: backward() called before forward()");
    plan_.backward(exec_, x_, y_, args_.gradient("grad1", grad1), args_.gradient("grad2", grad2), scale, upstream,
                   mode == Accumulate::Yes);
  }

  ExecutionSpace exec_;
  impl::TrainingArgs<ExecutionSpace, ValueType, Rank> args_;
  impl::MsSsimPlan<ExecutionSpace, ValueType> plan_;
  impl::InputArray<ValueType> x_, y_;
  bool has_forward_ = false;
};

}  // namespace kssim
