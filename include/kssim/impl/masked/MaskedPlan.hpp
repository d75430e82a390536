// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Masked SSIM: the weighted mean of the SSIM map, each map pixel weighted by the mask at its window's centre,
//   masked SSIM = sum_p w_p map_p / sum_p w_p   (over every slice, or one image's, or one slice's),
// with SSIM's own window statistics (MaskMode::Weights) or normalized ones (MaskMode::Normalized).
//  - Weights: SSIM's plan made MapWeighting::Centre (Plan.hpp), so every schedule the router picks runs it,
//    the fused ones included: its map pass writes the partials of w * map and sums w * map and w, and the mean's
//    last team (Reduction.hpp, WeightSums) divides them; its backward is SSIM's with the device factor
//    upstream / sum w.
//  - Normalized: NormalizedPlan.hpp (its own forward passes, Plan's adjoint passes), with the same factor.
// Both run through SlabPlan (Slabs.hpp): problems past 2^30 elements or the workspace budget run in pieces.
// Images and mask of a 16-bit storage type S are computed in T = float, the map and gradients stored as O
// (Storage.hpp), as SSIM's. Allocates only in its constructor.
//
// Definitions where the mean has nothing to average: a total weight of 0 gives the mean NaN and gradients
// 0; a mask value outside [0, 1] or NaN gives the mean NaN (MaskCheck.hpp).

#include <kssim/Options.hpp>
#include <kssim/impl/masked/MaskCheck.hpp>
#include <kssim/impl/masked/NormalizedPlan.hpp>
#include <kssim/impl/ssim/Plan.hpp>
#include <kssim/impl/ssim/Slabs.hpp>

#include <Kokkos_Core.hpp>
#include <memory>
#include <stdexcept>

namespace kssim::impl {

// The mask as the kernels index it: (N, C, D, H, W) with a single channel repeated (stride 0).
template <class T>
InputArray<T> broadcast_channels(InputArray<T> mask, int channels) {
  if (mask.extent(1) == 1) {
    mask.ext[1] = channels;
    mask.str[1] = 0;
  }
  return mask;
}

template <class ExecSpace, class T, class S = T, class O = S>
class MaskedPlan {
 public:
  using Mem = typename ExecSpace::memory_space;
  using WeightsPlan = SlabPlan<ExecSpace, T, S, O>;
  using NormalizedSlabs = SlabPlan<ExecSpace, T, S, O, NormalizedPlan<ExecSpace, T, S, O>>;

  MaskedPlan(const ExecSpace& exec, const Geometry& g, const Options& opts, MaskMode mode, PartialPlanes wanted)
      : g_(row_pitched<ExecSpace, T>(g)), mode_(mode), wanted_(wanted) {
    if (opts.window != Window::Exact)
      throw std::invalid_argument("kssim: masked SSIM takes Window::Exact only (a mask's weights renormalise the "
                                  "window; Window::Float32 defines SSIM by the raw window's moments)");
    if (g.extends() && mode == MaskMode::Normalized)
      throw std::invalid_argument(std::string("kssim: MaskMode::Normalized takes valid or same padding, got ") +
                                  to_string(opts.padding) +
                                  " (its windows already renormalise over the pixels inside the image)");
    if (normalized())
      normalized_ = std::make_shared<NormalizedSlabs>(exec, g, opts, wanted);
    else
      weighted_ = std::make_shared<WeightsPlan>(exec, g, opts, wanted, MapWeighting::Centre);
  }

  // Whether problem g runs in more than one piece (Slabs.hpp).
  static bool needs_slabs(const ExecSpace& exec, const Geometry& g, const Options& opts, MaskMode mode,
                          PartialPlanes wanted) {
    return mode == MaskMode::Normalized ? NormalizedSlabs::needs_slabs(exec, g, opts, wanted)
                                        : WeightsPlan::needs_slabs(exec, g, opts, wanted);
  }

  const Geometry& geometry() const { return g_; }
  MaskMode mode() const { return mode_; }
  int pieces() const { return weighted_ ? weighted_->pieces() : normalized_->pieces(); }  // Slabs.hpp
  PartialPlanes wanted() const { return wanted_; }
  // From the last forward(): the masked mean; per (n, c) slice the sums of w * map and of w; and 1 when the
  // mask had a value outside [0, 1] or NaN.
  Kokkos::View<const double, Mem> mean() const { return sums().mean; }
  Kokkos::View<const double*, Mem> value_sums() const { return sums().image_sums; }
  Kokkos::View<const double*, Mem> weight_sums() const { return sums().weight_image_sums; }
  Kokkos::View<const unsigned, Mem> mask_invalid() const { return sums().mask_invalid_seen; }

  // `mask` is (N, 1 or C, D, H, W) of the images' spatial extents (checked by the caller); `map` may be empty;
  // `value_float`, if not null, gets the mean rounded to float too.
  void forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const InputArray<S>& mask,
               const OutputArray<O>& map, float* value_float = nullptr) const;

  // The gradients of the masked mean (GradientTargets, PassArguments.hpp) from the partials of the last
  // forward().
  void backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const InputArray<S>& mask,
                const GradientTargets<O>& out) const;

 private:
  bool normalized() const { return mode_ == MaskMode::Normalized; }
  // The sums of w * map and of w, the mean and the mask's flag, of the whole problem.
  const MapSumStore<Mem>& sums() const { return weighted_ ? weighted_->map_sums() : normalized_->map_sums(); }

  Geometry g_;
  MaskMode mode_;
  PartialPlanes wanted_;
  std::shared_ptr<const WeightsPlan> weighted_;        // MaskMode::Weights
  std::shared_ptr<const NormalizedSlabs> normalized_;  // MaskMode::Normalized
};

// Defined outside the class so that kssim/Instantiate.hpp can compile them (and their kernels) once.
template <class ExecSpace, class T, class S, class O>
void MaskedPlan<ExecSpace, T, S, O>::forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                             const InputArray<S>& mask, const OutputArray<O>& map,
                                             float* value_float) const {
  check_mask_values(exec, MaskCheck<ExecSpace, S>{mask, sums().arrays.weights.invalid});
  const ForwardTerms<T, S> terms{.value_float = value_float, .map_weights = broadcast_channels(mask, g_.c)};
  if (weighted_)
    weighted_->forward(exec, x, y, map, terms);
  else
    normalized_->forward(exec, x, y, map, terms);
}

template <class ExecSpace, class T, class S, class O>
void MaskedPlan<ExecSpace, T, S, O>::backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                              const InputArray<S>& mask, const GradientTargets<O>& out) const {
  const bool want1 = out.grad1.data() != nullptr, want2 = out.grad2.data() != nullptr;
  if (!want1 && !want2) return;
  if ((want1 && !wanted_.image1) || (want2 && !wanted_.image2))
    throw std::invalid_argument("kssim: backward asked for a gradient this object was not set up to compute");
  // The partials are of w * map (map weights) or of the normalized map: scaled by upstream / sum w.
  const GradientTargets<O> scaled{out.grad1, out.grad2, out.scale,
                                  out.upstream.times_factor(sums().arrays.weights.inverse), out.accumulate};
  if (weighted_)
    weighted_->backward(exec, x, y, scaled, broadcast_channels(mask, g_.c));
  else
    normalized_->backward(exec, x, y, scaled, broadcast_channels(mask, g_.c));
}

}  // namespace kssim::impl
