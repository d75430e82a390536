// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// SSIM: the one-call functions (the mean, the map, per-image and per-channel means, and gradients with respect
// to both images) and kssim::SSIM, the training object (below). The one-call functions keep their workspaces
// between calls of the same shape and options (impl/ssim/PlanCache.hpp: a few per execution space and value
// type; kssim::free_workspaces() releases them), so a loop of calls on one shape allocates nothing after the
// first.
//
//   double s = kssim::ssim(exec, img1, img2);                     // mean, synchronises
//   kssim::ssim(exec, img1, img2, mean_view);                     // rank-0 View, no synchronisation
//   kssim::ssim_map(exec, img1, img2, map);                       // (N, C, Ho, Wo) or (N, C, Do, Ho, Wo)
//   auto e = kssim::map_extents(img1, opts);                      // those extents, for allocating the map
//   kssim::ssim_per_image(exec, img1, img2, per_image);           // (N)
//   kssim::ssim_per_channel(exec, img1, img2, per_channel);       // (N, C)
//   double s = kssim::ssim_grad(exec, img1, img2, grad1, grad2);  // either gradient may be an empty View
//
// Images are rank-4 (N, C, H, W) or rank-5 (N, C, D, H, W) Views of float or double, or of a 16-bit float
// type (impl/core/Storage.hpp); a rank-2 (H, W) or rank-3 (D, H, W) View is one image or one volume, whose
// map and gradients have its rank too. Arithmetic is in the images' value type (float for 16-bit images); the
// mean is accumulated in double. Maps and gradients hold the images' value type, or float for 16-bit images:
// the type of the View passed chooses whether they are rounded to 16 bits.
//
// Problems past 2^30 elements or Options::max_workspace_bytes run in pieces (impl/ssim/Slabs.hpp): groups of
// images or channels, or slabs along the outermost spatial axis. A one-call function allocates their
// workspace for the call.

#include <kssim/Options.hpp>
#include <kssim/ViewChecks.hpp>
#include <kssim/impl/core/OneCall.hpp>
#include <kssim/impl/core/TrainingObject.hpp>
#include <kssim/impl/ssim/Plan.hpp>
#include <kssim/impl/ssim/PlanCache.hpp>
#include <kssim/impl/ssim/Slabs.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <optional>
#include <stdexcept>

namespace kssim {

// Mean SSIM written into a rank-0 View, without synchronising the host.
template <class ExecutionSpace, class View1, class View2, class MeanView>
  requires Kokkos::is_view_v<MeanView>
void ssim(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MeanView& mean,
          const Options& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, MeanView, 0>());
  impl::ImagePair<ExecutionSpace, View1, View2> p(img1, img2, opts);
  using P = decltype(p);
  const auto plan = impl::one_call_plan<ExecutionSpace, typename P::T, typename P::S>(exec, p.g, opts);
  plan.forward(exec, p.x, p.y, {});
  impl::write_mean(exec, plan.total(), double(p.g.map_size()), mean);
}

// Mean SSIM over N, C and every map pixel, returned on the host (this synchronises `exec`).
template <class ExecutionSpace, class View1, class View2>
double ssim(const ExecutionSpace& exec, const View1& img1, const View2& img2, const Options& opts = {}) {
  impl::ImagePair<ExecutionSpace, View1, View2> p(img1, img2, opts);
  using P = decltype(p);
  const auto plan = impl::one_call_plan<ExecutionSpace, typename P::T, typename P::S>(exec, p.g, opts);
  plan.forward(exec, p.x, p.y, {});
  double total = 0;
  Kokkos::deep_copy(exec, total, plan.total());
  exec.fence("kssim::ssim: wait for the mean");
  return total / double(p.g.map_size());
}

// The extents of the map for images shaped like `img` under `opts`: (N, C, Ho, Wo) or (N, C, Do, Ho, Wo),
// with Ho = H - window_size + 1 for valid padding and H for same (likewise Do, Wo). Throws
// std::invalid_argument as the metric would (invalid options, empty or too-small images).
//   auto e = kssim::map_extents(img1, opts);
//   Kokkos::View<float****> map("map", e[0], e[1], e[2], e[3]);
template <class View>
std::array<int, View::rank()> map_extents(const View& img, const Options& opts = {}) {
  static_assert(Kokkos::is_view_v<View>, "kssim: map_extents takes an image View");
  static_assert(View::rank() >= 2 && View::rank() <= 5,
                "kssim: images must be rank 2 (H, W), 3 (D, H, W), 4 (N, C, H, W) or 5 (N, C, D, H, W)");
  return impl::map_extents<View::rank()>(impl::make_geometry<impl::batch_rank_v<View>>(impl::batch_extents(img), opts));
}

// The SSIM map: (N, C, Ho, Wo) for images, (N, C, Do, Ho, Wo) for volumes. For 16-bit images a map of
// their type is rounded to it, a float map is not.
template <class ExecutionSpace, class View1, class View2, class MapView>
void ssim_map(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MapView& map,
              const Options& opts = {}) {
  impl::ImagePair<ExecutionSpace, View1, View2> p(img1, img2, opts);
  using P = decltype(p);
  using O = typename MapView::value_type;
  static_assert(check_ssim_output_view<ExecutionSpace, MapView, typename P::S>());
  static_assert(MapView::rank() == View1::rank(), "kssim: both Views must have the same rank");
  impl::require_extents("map", map, impl::map_extents<View1::rank()>(p.g));
  const auto plan = impl::one_call_plan<ExecutionSpace, typename P::T, typename P::S, O>(exec, p.g, opts);
  plan.forward(exec, p.x, p.y, impl::as_rank5<impl::OutputArray<O>>(map));
}

// Mean SSIM of each image (over channels and map pixels), into a View of extent (N).
template <class ExecutionSpace, class View1, class View2, class PerImageView>
void ssim_per_image(const ExecutionSpace& exec, const View1& img1, const View2& img2, const PerImageView& per_image,
                    const Options& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, PerImageView, 1>());
  impl::ImagePair<ExecutionSpace, View1, View2> p(img1, img2, opts);
  using P = decltype(p);
  impl::require_extents("per_image", per_image, std::array<int, 1>{p.g.n});
  const auto plan = impl::one_call_plan<ExecutionSpace, typename P::T, typename P::S>(exec, p.g, opts);
  plan.forward(exec, p.x, p.y, {});
  const double* sums = plan.image_sums().data();
  typename PerImageView::value_type* out = per_image.data();
  const std::ptrdiff_t stride = per_image.stride(0);
  const int channels = p.g.c;
  const double count = double(p.g.map_size_per_image()) * channels;
  impl::launch("kssim::write_per_image", Kokkos::RangePolicy<ExecutionSpace>(exec, 0, p.g.n), KOKKOS_LAMBDA(int n) {
    double s = 0;
    for (int c = 0; c < channels; ++c) s += sums[n * channels + c];
    out[n * stride] = typename PerImageView::value_type(s / count);
  });
}

// Mean SSIM of each (image, channel), into a View of extent (N, C).
template <class ExecutionSpace, class View1, class View2, class PerChannelView>
void ssim_per_channel(const ExecutionSpace& exec, const View1& img1, const View2& img2,
                      const PerChannelView& per_channel, const Options& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, PerChannelView, 2>());
  impl::ImagePair<ExecutionSpace, View1, View2> p(img1, img2, opts);
  using P = decltype(p);
  impl::require_extents("per_channel", per_channel, std::array<int, 2>{p.g.n, p.g.c});
  const auto plan = impl::one_call_plan<ExecutionSpace, typename P::T, typename P::S>(exec, p.g, opts);
  plan.forward(exec, p.x, p.y, {});
  const double* sums = plan.image_sums().data();
  typename PerChannelView::value_type* out = per_channel.data();
  const std::ptrdiff_t stride_n = per_channel.stride(0), stride_c = per_channel.stride(1);
  const int channels = p.g.c;
  const double count = double(p.g.map_size_per_image());
  impl::launch("kssim::write_per_channel", Kokkos::RangePolicy<ExecutionSpace>(exec, 0, p.g.images()),
               KOKKOS_LAMBDA(int nc) {
                 out[nc / channels * stride_n + nc % channels * stride_c] =
                     typename PerChannelView::value_type(sums[nc] / count);
               });
}

// Mean SSIM (returned, synchronising) and its gradients d(mean)/d(img1) into grad1 and d(mean)/d(img2)
// into grad2. Pass {} or an empty View to skip a gradient and its cost. For 16-bit images, gradients of
// their type are rounded to it (after the multiplication by any upstream factor), float gradients are not;
// both gradients hold the same type.
template <class ExecutionSpace, class View1, class View2, class Grad1 = impl::writable_like_t<View1>,
          class Grad2 = Grad1>
double ssim_grad(const ExecutionSpace& exec, const View1& img1, const View2& img2, const Grad1& grad1,
                 const Grad2& grad2 = {}, const Options& opts = {}) {
  impl::ImagePair<ExecutionSpace, View1, View2> p(img1, img2, opts);
  using P = decltype(p);
  impl::GradientArgs<ExecutionSpace, View1, Grad1, Grad2> g(img1, grad1, grad2);
  const auto plan =
      impl::one_call_plan<ExecutionSpace, typename P::T, typename P::S, typename decltype(g)::O>(exec, p.g, opts,
                                                                                                g.wanted);
  plan.forward_backward(exec, p.x, p.y, {.grad1 = g.g1, .grad2 = g.g2});
  double total = 0;
  Kokkos::deep_copy(exec, total, plan.total());
  exec.fence("kssim::ssim_grad: wait for the mean");
  return total / double(p.g.map_size());
}

// A reusable SSIM loss for one image shape, for training loops. The constructor allocates the whole workspace;
// forward() and backward() then allocate nothing and never synchronise the host.
//
//   kssim::SSIM<Kokkos::Cuda, float> loss(exec, {N, C, H, W});          // gradient of image 1 by default
//   loss.forward(render, target);                                        // loss.value(): rank-0 device View
//   loss.backward(grad_render, {}, kssim::Accumulate::Yes, -0.2);        // += d(-0.2 * SSIM)/d render
//   loss.backward(dloss, grad_render);   // dloss: a rank-0 device View<float> or <double>, read by the kernels
//   ({} for a gradient that is not wanted; an empty View works too)
//
// backward() uses the images of the last forward(): keep them alive and unchanged in between. A problem split
// into pieces gets its workspace once; backward() then recomputes each piece's forward statistics (one more
// forward pass), and still allocates nothing.
//
// 16-bit images (impl/core/Storage.hpp): ValueType is their type (e.g. Kokkos::Experimental::half_t); the
// kernels compute in float, and the map and gradients hold OutputType: ValueType by default (rounded to
// it once, after any upstream factor and accumulation), or float:
//   kssim::SSIM<Kokkos::Cuda, Kokkos::Experimental::half_t, 4, float> loss(exec, {N, C, H, W});
template <class ExecutionSpace, class ValueType, int Rank = 4, class OutputType = ValueType>
class SSIM : public impl::TrainingObject<SSIM<ExecutionSpace, ValueType, Rank, OutputType>, ExecutionSpace, ValueType,
                                         Rank, OutputType> {
  using Shell = impl::TrainingObject<SSIM, ExecutionSpace, ValueType, Rank, OutputType>;
  friend Shell;
  using typename Shell::Images;
  using typename Shell::Outputs;
  using typename Shell::Targets;
  using T = compute_type_t<ValueType>;

 public:
  using typename Shell::memory_space;
  using output_type = OutputType;

  SSIM(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const Options& opts = {},
       Gradients gradients = Gradients::Image1)
      : Shell("kssim::SSIM", exec, extents),
        plan_(exec, impl::make_geometry<Rank>(extents, opts), opts, impl::planes_for(gradients)) {}

  // How many pieces each pass runs in (1 unless the problem is split), and the workspace they hold.
  int pieces() const { return plan_.pieces(); }
  std::size_t workspace_bytes() const { return plan_.workspace_bytes(); }

  // Computes the mean SSIM into value(); optionally writes the map. No host synchronisation.
  template <class View1, class View2>
  void forward(const View1& img1, const View2& img2) {
    forward(img1, img2, Kokkos::View<OutputType*****, Kokkos::LayoutStride, memory_space>{});
  }
  template <class View1, class View2, class MapView>
  void forward(const View1& img1, const View2& img2, const MapView& map) {
    const auto map5 = this->map_array(map, plan_.geometry());
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, map5);
    });
  }

  // forward() that also writes the mean, rounded once to float, to `value` (one float in memory_space, e.g. a
  // framework's result tensor) from the kernel that computes it, instead of a copy of its own afterwards.
  template <class View1, class View2>
  void forward_into(const View1& img1, const View2& img2, float* value) {
    float* const out = this->value_pointer(value);
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, {}, {.value_float = out});
    });
  }

  // Mean SSIM of the last forward(), on the device (value_on_host() copies it: impl/core/TrainingObject.hpp).
  Kokkos::View<const double, memory_space> value() const { return plan_.mean(); }
  // Sums of the map over each (n, c) slice of the last forward(), n major (N * C values), on the device:
  // per-image and per-channel means without a second pass (the PyTorch binding's reduction="none").
  Kokkos::View<const double*, memory_space> slice_sums() const { return plan_.image_sums(); }

  // backward(): gradients of upstream * mean SSIM (impl/core/TrainingObject.hpp).

 private:
  void backward_arrays(const ExecutionSpace& exec, const Images& x, const Images& y,
                       const Targets& out) {
    plan_.backward(exec, x, y, out);
  }

  impl::SlabPlan<ExecutionSpace, T, ValueType, OutputType> plan_;
};

}  // namespace kssim
