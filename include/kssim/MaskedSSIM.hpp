// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Masked SSIM: SSIM over the part of the images a mask selects, and its gradients with respect to both.
//
//   double s = kssim::masked_ssim(exec, img1, img2, mask, kssim::MaskMode::Weights);   // synchronises
//   kssim::masked_ssim(exec, img1, img2, mask, mode, mean_view, opts);                  // rank-0 View
//   kssim::masked_ssim_map(exec, img1, img2, mask, mode, map, opts);
//   kssim::masked_ssim_per_image(...) / masked_ssim_per_channel(...);
//   double s = kssim::masked_ssim_grad(exec, img1, img2, mask, mode, grad1, grad2, opts);
//   kssim::MaskedSSIM<Exec, float> loss(exec, {N, C, H, W}, mode);  // training loops, like kssim::SSIM
//
// The mask is a View like the images, (N, C, H, W) or (N, 1, H, W) (one weight per pixel for every channel;
// volumes (N, C or 1, D, H, W)), of the images' value type, with values in [0, 1]. Images and mask may be
// 16-bit, as SSIM's (kssim/SSIM.hpp, impl/core/Storage.hpp): computed in float, maps and gradients of the
// images' type or float (kssim::MaskedSSIM<Exec, half_t, 4, float>: float outputs). Each map pixel p weighs
// w_p, the mask at the centre of its window (valid padding: mask pixel (h + w/2, w + w/2) for map pixel
// (h, w); same padding: the same pixel), and
//   masked SSIM = sum_p w_p map_p / sum_p w_p
// over every slice (per image: over its channels; per channel: over its slice). The two modes
// (kssim::MaskMode) differ in the map:
//   Weights     the SSIM map itself: pixels of weight 0 still enter their neighbours' windows.
//   Normalized  normalized convolution: mu = B(m x) / B(m), E[x^2] = B(m x^2) / B(m), E[xy] = B(m x y) / B(m)
//               (B: the Gaussian window), so pixels of weight 0 (land in an ocean field, missing data, a
//               render's background; their values may even be NaN) never enter any window, and neither do
//               the zeros outside the image with same padding. A window without any pixel of weight > 0
//               has the map value 0; its centre has weight 0, so it never counts.
// Defined edge cases: a total weight of 0 gives NaN (the one-call functions return it, the training object
// too) with gradients 0. Mask values outside [0, 1] or NaN: the one-call functions that return on the host
// throw std::invalid_argument (after computing, to keep one pass); the others, which do not synchronise,
// give the mean NaN. Wrong mask extents, rank or value type: std::invalid_argument / static_assert.

#include <kssim/Options.hpp>
#include <kssim/impl/core/OneCall.hpp>
#include <kssim/impl/ssim/PlanCache.hpp>
#include <kssim/impl/masked/MaskedPlan.hpp>
#include <kssim/impl/core/HostValue.hpp>
#include <kssim/impl/core/SliceMeans.hpp>
#include <kssim/impl/core/TrainingObject.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <memory>
#include <stdexcept>
#include <string>

namespace kssim {
namespace impl {

// The checked mask of an image pair: same rank and value type, extents (N, 1 or C, [D,] H, W); for one image
// or volume (rank 2 or 3) the image's own.
template <class ExecutionSpace, class ImageView, class MaskView>
InputArray<value_type_of<ImageView>> mask_array(const MaskView& mask, const std::array<int, ImageView::rank()>& image) {
  static_assert(check_ssim_image_view<ExecutionSpace, MaskView>());
  static_assert(check_same_kind<ImageView, MaskView>());
  constexpr bool batch = ImageView::rank() >= 4;
  bool ok = !batch || mask.extent(1) == 1 || int(mask.extent(1)) == image[1];
  for (std::size_t i = 0; i < image.size(); ++i) ok = ok && ((batch && i == 1) || int(mask.extent(i)) == image[i]);
  if (!ok) {
    std::array<int, ImageView::rank()> one = image;
    if constexpr (batch) one[1] = 1;
    throw std::invalid_argument("kssim: mask has extents " + extents_string(mask) + ", expected " +
                                shape_string(image.data(), int(image.size())) +
                                (batch ? " or " + shape_string(one.data(), int(one.size())) : std::string()));
  }
  return as_rank5<InputArray<value_type_of<ImageView>>>(mask);
}

// The mask-value check of a finished forward pass (synchronises).
template <class ExecutionSpace, class Plan>
void require_valid_mask(const ExecutionSpace& exec, const Plan& plan) {
  unsigned invalid = 0;
  Kokkos::deep_copy(exec, invalid, plan.mask_invalid());
  exec.fence("kssim: mask check");
  if (invalid) throw std::invalid_argument("kssim: mask values must be in [0, 1] (NaN is not allowed)");
}

// What makes two masked problems the same plan (PlanCache.hpp).
struct MaskedPlanKey {
  Geometry g;
  Options opts;
  MaskMode mode;
  PartialPlanes wanted;
  friend bool operator==(const MaskedPlanKey& a, const MaskedPlanKey& b) {
    return same_problem(a.g, b.g) && same_options(a.opts, b.opts) && a.mode == b.mode &&
           a.wanted.image1 == b.wanted.image1 && a.wanted.image2 == b.wanted.image2;
  }
};

// A masked plan of an image pair with its arrays, kept between calls like SSIM's (PlanCache.hpp); problems that
// run in slabs (Slabs.hpp) get a plan of their own, as SSIM's do (one_call_plan). O: the map's and gradients'
// type (the images', or float for 16-bit images).
template <class ExecutionSpace, class View1, class View2, class MaskView, class O = value_type_of<View1>>
struct MaskedCall {
  using Images = ImagePair<ExecutionSpace, View1, View2>;
  using PlanT = MaskedPlan<ExecutionSpace, typename Images::T, typename Images::S, O>;
  Images p;
  InputArray<typename Images::S> m;
  std::shared_ptr<const PlanT> plan;

  MaskedCall(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask, MaskMode mode,
             const Options& opts, PartialPlanes wanted = {})
      : p(img1, img2, opts), m(mask_array<ExecutionSpace, View1>(mask, extents_of(img1))) {
    const auto make = [&] { return std::make_shared<const PlanT>(exec, p.g, opts, mode, wanted); };
    const bool sliced = PlanT::needs_slabs(exec, p.g, opts, mode, wanted);
    plan = sliced ? make() : PlanCache<ExecutionSpace, PlanT, MaskedPlanKey>::get().plan(
                                 exec, MaskedPlanKey{p.g, opts, mode, wanted}, make);
  }
};

}  // namespace impl

// Mean masked SSIM written into a rank-0 View, without synchronising (a bad mask value gives NaN).
template <class ExecutionSpace, class View1, class View2, class MaskView, class MeanView>
  requires Kokkos::is_view_v<MeanView>
void masked_ssim(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask, MaskMode mode,
                 const MeanView& mean, const Options& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, MeanView, 0>());
  impl::MaskedCall<ExecutionSpace, View1, View2, MaskView> c(exec, img1, img2, mask, mode, opts);
  c.plan->forward(exec, c.p.x, c.p.y, c.m, {});
  impl::write_mean(exec, c.plan->mean(), 1.0, mean);
}

// Mean masked SSIM, returned on the host (synchronises; throws on mask values outside [0, 1]).
template <class ExecutionSpace, class View1, class View2, class MaskView>
double masked_ssim(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask,
                   MaskMode mode, const Options& opts = {}) {
  impl::MaskedCall<ExecutionSpace, View1, View2, MaskView> c(exec, img1, img2, mask, mode, opts);
  c.plan->forward(exec, c.p.x, c.p.y, c.m, {});
  impl::require_valid_mask(exec, *c.plan);
  return impl::host_value(exec, c.plan->mean(), "kssim::masked_ssim: wait for the mean");
}

// The map (SSIM's, or with MaskMode::Normalized the normalized one; unweighted): (N, C, Ho, Wo) or
// (N, C, Do, Ho, Wo). Throws on mask values outside [0, 1] (synchronises).
template <class ExecutionSpace, class View1, class View2, class MaskView, class MapView>
void masked_ssim_map(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask,
                     MaskMode mode, const MapView& map, const Options& opts = {}) {
  static_assert(check_ssim_output_view<ExecutionSpace, MapView, impl::value_type_of<View1>>());
  static_assert(MapView::rank() == View1::rank(), "kssim: both Views must have the same rank");
  using O = typename MapView::value_type;
  impl::MaskedCall<ExecutionSpace, View1, View2, MaskView, O> c(exec, img1, img2, mask, mode, opts);
  impl::require_extents("map", map, impl::map_extents<View1::rank()>(c.p.g));
  c.plan->forward(exec, c.p.x, c.p.y, c.m, impl::as_rank5<impl::OutputArray<O>>(map));
  impl::require_valid_mask(exec, *c.plan);
}

// Masked SSIM of each image (weights summed over its channels), into a View of extent (N).
template <class ExecutionSpace, class View1, class View2, class MaskView, class PerImageView>
void masked_ssim_per_image(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask,
                           MaskMode mode, const PerImageView& per_image, const Options& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, PerImageView, 1>());
  impl::MaskedCall<ExecutionSpace, View1, View2, MaskView> c(exec, img1, img2, mask, mode, opts);
  impl::require_extents("per_image", per_image, std::array<int, 1>{c.p.g.n});
  c.plan->forward(exec, c.p.x, c.p.y, c.m, {});
  impl::write_per_image(
      exec, impl::SliceSums{c.plan->value_sums().data(), c.plan->weight_sums().data(), 1.0, c.p.g.n, c.p.g.c},
      per_image);
  impl::require_valid_mask(exec, *c.plan);
}

// Masked SSIM of each (image, channel), into a View of extent (N, C).
template <class ExecutionSpace, class View1, class View2, class MaskView, class PerChannelView>
void masked_ssim_per_channel(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask,
                             MaskMode mode, const PerChannelView& per_channel, const Options& opts = {}) {
  static_assert(check_result_view<ExecutionSpace, PerChannelView, 2>());
  impl::MaskedCall<ExecutionSpace, View1, View2, MaskView> c(exec, img1, img2, mask, mode, opts);
  impl::require_extents("per_channel", per_channel, std::array<int, 2>{c.p.g.n, c.p.g.c});
  c.plan->forward(exec, c.p.x, c.p.y, c.m, {});
  impl::write_per_channel(
      exec, impl::SliceSums{c.plan->value_sums().data(), c.plan->weight_sums().data(), 1.0, c.p.g.n, c.p.g.c},
      per_channel);
  impl::require_valid_mask(exec, *c.plan);
}

// Mean masked SSIM (returned, synchronising) and its gradients with respect to img1 and img2; {} or an
// empty View skips a gradient. Throws on mask values outside [0, 1].
template <class ExecutionSpace, class View1, class View2, class MaskView, class Grad1 = impl::writable_like_t<View1>,
          class Grad2 = Grad1>
double masked_ssim_grad(const ExecutionSpace& exec, const View1& img1, const View2& img2, const MaskView& mask,
                        MaskMode mode, const Grad1& grad1, const Grad2& grad2 = {}, const Options& opts = {}) {
  impl::GradientArgs<ExecutionSpace, View1, Grad1, Grad2> g(img1, grad1, grad2);
  impl::MaskedCall<ExecutionSpace, View1, View2, MaskView, typename decltype(g)::O> c(exec, img1, img2, mask, mode,
                                                                                      opts, g.wanted);
  c.plan->forward(exec, c.p.x, c.p.y, c.m, {});
  c.plan->backward(exec, c.p.x, c.p.y, c.m, {.grad1 = g.g1, .grad2 = g.g2});
  impl::require_valid_mask(exec, *c.plan);
  return impl::host_value(exec, c.plan->mean(), "kssim::masked_ssim_grad: wait for the mean");
}

// A reusable masked SSIM loss for one image shape, for training loops: the constructor allocates the
// workspace; forward() and backward() then allocate nothing and never synchronise the host (so a mask value
// outside [0, 1] or NaN is not thrown: the mean reads NaN). The mask may change at every forward();
// backward() uses the images and mask of the last forward(): keep them alive and unchanged in between.
// 16-bit images and mask: as kssim::SSIM (OutputType: the map's and gradients' type, ValueType or float).
template <class ExecutionSpace, class ValueType, int Rank = 4, class OutputType = ValueType>
class MaskedSSIM : public impl::TrainingObject<MaskedSSIM<ExecutionSpace, ValueType, Rank, OutputType>, ExecutionSpace,
                                               ValueType, Rank, OutputType> {
  using Shell = impl::TrainingObject<MaskedSSIM, ExecutionSpace, ValueType, Rank, OutputType>;
  friend Shell;
  using typename Shell::Images;
  using typename Shell::Outputs;
  using typename Shell::Targets;

 public:
  using typename Shell::memory_space;
  using output_type = OutputType;
  using View = Kokkos::View<std::conditional_t<Rank == 4, OutputType****, OutputType*****>, Kokkos::LayoutStride,
                            memory_space>;

  MaskedSSIM(const ExecutionSpace& exec, const std::array<int, Rank>& extents, MaskMode mode, const Options& opts = {},
             Gradients gradients = Gradients::Image1)
      : Shell("kssim::MaskedSSIM", exec, extents),
        plan_(exec, impl::make_geometry<Rank>(extents, opts), opts, mode, impl::planes_for(gradients)) {}

  // How many pieces each pass runs in (1 unless MaskMode::Weights splits the problem, as SSIM does).
  int pieces() const { return plan_.pieces(); }

  // Computes the masked mean into value(); optionally writes the map. No host synchronisation.
  template <class View1, class View2, class MaskView>
  void forward(const View1& img1, const View2& img2, const MaskView& mask) {
    forward(img1, img2, mask, View{});
  }
  template <class View1, class View2, class MaskView, class MapView>
  void forward(const View1& img1, const View2& img2, const MaskView& mask, const MapView& map) {
    run(img1, img2, mask, map, nullptr);
  }

  // forward() that also writes the masked mean, rounded once to float, to `value` (one float in memory_space),
  // from the kernel that computes it.
  template <class View1, class View2, class MaskView>
  void forward_into(const View1& img1, const View2& img2, const MaskView& mask, float* value) {
    run(img1, img2, mask, View{}, this->value_pointer(value));
  }

  // Masked mean of the last forward(), on the device (value_on_host() copies it: impl/core/TrainingObject.hpp).
  Kokkos::View<const double, memory_space> value() const { return plan_.mean(); }

  // backward(): gradients of upstream * masked mean, as SSIM::backward (impl/core/TrainingObject.hpp).

 private:
  template <class View1, class View2, class MaskView, class MapView>
  void run(const View1& img1, const View2& img2, const MaskView& mask, const MapView& map, float* value_float) {
    const auto map5 = this->map_array(map, plan_.geometry());
    const auto m = impl::mask_array<ExecutionSpace, View1>(mask, this->extents());
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      m_ = m;  // backward() reads the mask of the last forward() too
      plan_.forward(exec, x, y, m_, map5, value_float);
    });
  }

  void backward_arrays(const ExecutionSpace& exec, const Images& x, const Images& y,
                       const Targets& out) {
    plan_.backward(exec, x, y, m_, out);
  }

  impl::MaskedPlan<ExecutionSpace, compute_type_t<ValueType>, ValueType, OutputType> plan_;
  Images m_;
};

}  // namespace kssim
