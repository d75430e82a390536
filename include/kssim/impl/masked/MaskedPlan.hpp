// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Masked SSIM: the weighted mean of the SSIM map, each map pixel weighted by the mask at its window's centre,
//   masked SSIM = sum_p w_p map_p / sum_p w_p   (over every slice, or one image's, or one slice's),
// with SSIM's own window statistics (MaskMode::Weights) or normalized ones (MaskMode::Normalized).
//  - Weights: SSIM's plan made MapWeighting::Centre (Plan.hpp), so every schedule the router picks runs it,
//    the fused ones included, and problems past 2^30 elements or the workspace budget run in slabs
//    (Slabs.hpp): its map pass writes the partials of w * map and sums w * map and w, and the mean's last
//    team (Reduction.hpp, WeightSums) divides them; its backward is SSIM's with the device factor upstream /
//    sum w.
//  - Normalized: its forward fused for images (FusedNormalizedForward.hpp), else the stage schedule with a fifth
//    plane (MaskedRowBlur, MaskedColumnBlur), as the router chooses (choose_normalized_forward); the adjoint
//    passes are Plan's kernels (AdjointRow's PixelWeights instance: the mask at each pixel, a compile-time
//    weight), scaled by 1 / sum w.
// Images and mask of a 16-bit storage type S are computed in T = float, the map and gradients stored as O
// (Storage.hpp), as SSIM's. Allocates only in its constructor.
//
// Definitions where the mean has nothing to average: a total weight of 0 gives the mean NaN and gradients
// 0; a mask value outside [0, 1] or NaN gives the mean NaN (MaskCheck.hpp).

#include <kssim/Options.hpp>
#include <kssim/impl/stages/AxisPasses.hpp>
#include <kssim/impl/masked/MaskCheck.hpp>
#include <kssim/impl/masked/MaskedColumnBlur.hpp>
#include <kssim/impl/masked/MaskedRowBlur.hpp>
#include <kssim/impl/schedules/Router.hpp>
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

// Samples of the image where the mask is > 0, NaN elsewhere, in the compute type T: the recentring shift
// (Recentring.hpp) then comes from valid data only.
template <class T, class S>
struct MaskedSamples {
  using non_const_value_type = T;
  InputArray<S> image, mask;
  KOKKOS_INLINE_FUNCTION T operator()(int n, int c, int d, int h, int w) const {
    return to_compute<T>(mask(n, c, d, h, w)) > T(0) ? to_compute<T>(image(n, c, d, h, w))
                                                     : Kokkos::Experimental::quiet_NaN_v<T>;
  }
};

// compute_shifts (Recentring.hpp) of the pixels where the mask is > 0.
template <class ExecSpace, class T, class S>
void compute_masked_shifts(const ExecSpace& exec, const Geometry& g, const InputArray<S>& x, const InputArray<S>& y,
                           const InputArray<S>& mask, T* shifts) {
  const MaskedSamples<T, S> xs{x, mask}, ys{y, mask};
  launch("kssim::masked_recentring_shifts", Kokkos::RangePolicy<ExecSpace>(exec, 0, 2 * g.images()),
         KOKKOS_LAMBDA(int k) {
           const int nc = k / 2;
           shifts[k] = recentring_sample(k % 2 ? ys : xs, nc / g.c, nc % g.c, g);
         });
}

template <class ExecSpace, class T, class S = T, class O = S>
class MaskedPlan {
 public:
  using Mem = typename ExecSpace::memory_space;

  MaskedPlan(const ExecSpace& exec, const Geometry& g, const Options& opts, MaskMode mode, PartialPlanes wanted)
      : g_(row_pitched<ExecSpace, T>(g)), opts_(opts), mode_(mode), wanted_(wanted) {
    if (opts.window != Window::Exact)
      throw std::invalid_argument("kssim: masked SSIM takes Window::Exact only (a mask's weights renormalise the "
                                  "window; Window::Float32 defines SSIM by the raw window's moments)");
    if (!fits_one_call(g_) && normalized())
      throw std::invalid_argument("kssim: MaskMode::Normalized takes at most 2^30 elements per call (MaskMode::Weights "
                                  "splits larger problems into slabs)");
    if (g_.extends() && mode == MaskMode::Normalized)
      throw std::invalid_argument(std::string("kssim: MaskMode::Normalized takes valid or same padding, got ") +
                                  to_string(opts.padding) +
                                  " (its windows already renormalise over the pixels inside the image)");
    if (!normalized()) {
      weighted_ = std::make_shared<SlabPlan<ExecSpace, T, S, O>>(exec, g, opts, wanted, MapWeighting::Centre);
      return;
    }
    ensure_self_checked<ExecSpace, T>(exec);
    constants_ = StageConstants<T>::of(opts, g.volumetric);
    const int planes = masked_planes;
    passes_ = make_axis_passes<ExecSpace, T>(exec, g_, planes);
    const AxisPass& last = g.volumetric ? passes_.depth : passes_.column;
    fused_rows_ = choose_normalized_forward<ExecSpace, T>(exec, g_, opts);

    shifts_ = Kokkos::View<T* [2], Mem>(Kokkos::view_alloc(exec, "kssim::shifts"), g.images());
    // The row planes: the stage forward's five; the fused forward's backward uses them for its adjoint column
    // pass's output only.
    const int row_planes = !fused() ? planes : wanted.any() ? wanted.count() : 0;
    if (row_planes > 0)
      row_stats_ = PlaneStore<T, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kssim::row_stats"),
                                      row_planes, g_.row_plane_size());
    if (g.volumetric)
      column_stats_ = PlaneStore<T, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kssim::column_stats"),
                                         planes, g.column_plane_size());
    if (wanted.any())
      partials_ = PlaneStore<T, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kssim::partials"),
                                     wanted.count(), g.volumetric ? g.map_size() : g_.padded_map_size());
    const int tiles = fused() ? FusedNormalizedForward<ExecSpace, T>::tiles_per_image(g_, fused_rows_)
                              : last.tiles_per_outer() * last.outer_per_image;
    sums_ = MapSumStore<Mem>(exec, g.images(), tiles, 1.0);
    sums_.add_weights(exec);
  }

  const Geometry& geometry() const { return g_; }
  MaskMode mode() const { return mode_; }
  int pieces() const { return weighted_ ? weighted_->pieces() : 1; }  // Slabs.hpp
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
  bool fused() const { return fused_rows_ > 0; }  // the fused normalized forward
  // The sums of w * map and of w, the mean and the mask's flag: the weighted plan's or the stage pipeline's.
  const MapSumStore<Mem>& sums() const { return weighted_ ? weighted_->map_sums() : sums_; }

  template <class Pass>
  Pass statistics_pass() const {
    Pass k{};
    k.in = plane_array(row_stats_);
    k.out_stats = plane_array(column_stats_);
    k.shifts = shifts_.data();
    k.window = constants_.window;
    k.a = passes_.column;
    k.g = g_;
    return k;
  }

  using MapPass = MaskedColumnBlur<ExecSpace, T, MaskMode::Normalized, ColumnOutput::Map, S, O>;
  MapPass map_pass(const PlaneArray<T>& in, const InputArray<S>& mask, const OutputArray<O>& map) const {
    MapPass k{};
    k.in = in;
    k.map = map;
    k.partials = plane_array(partials_);
    k.wanted = wanted_;
    k.sums = sums_.arrays;
    k.mask = mask;
    k.shifts = shifts_.data();
    k.window = constants_.window;
    k.a = g_.volumetric ? passes_.depth : passes_.column;
    k.g = g_;
    k.c1 = constants_.c1;
    k.c2 = constants_.c2;
    return k;
  }

  template <int K>
  // `factor`: the device factor 1 / sum w, times the upstream factor where there is one.
  void backward_planes(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const InputArray<S>& m,
                       const GradientTargets<O>& out, const UpstreamFactor& factor) const {
    PlaneArray<T> column_side = plane_array(partials_);
    if (g_.volumetric) {
      adjoint_column(exec, opts_,
                     AdjointColumn<ExecSpace, T, K>{column_side, plane_array(column_stats_), constants_.reversed,
                                                    passes_.adjoint_depth});
      column_side = plane_array(column_stats_);
    }
    adjoint_column(exec, opts_,
                   AdjointColumn<ExecSpace, T, K>{column_side, plane_array(row_stats_), constants_.reversed,
                                                  passes_.adjoint_column});
    adjoint_row(exec, opts_, adjoint_row_pass<K>(x, y, m, out, factor));
  }

  template <int K>
  AdjointRow<ExecSpace, T, K, true, false, S, O> adjoint_row_pass(const InputArray<S>& x, const InputArray<S>& y,
                                                                  const InputArray<S>& m, const GradientTargets<O>& out,
                                                                  const UpstreamFactor& factor) const {
    // The pixel weights are the mask (normalized statistics: d B(m x) / dx = m B^T).
    return {.in = plane_array(row_stats_), .wanted = wanted_, .x = x, .y = y, .grad1 = out.grad1,
            .grad2 = out.grad2, .shifts = shifts_.data(), .upstream = factor, .pixel_weights = m,
            .scale = out.scale, .accumulate = out.accumulate, .window = constants_.reversed, .g = g_};
  }

  Geometry g_;
  Options opts_;
  MaskMode mode_;
  PartialPlanes wanted_;
  std::shared_ptr<const SlabPlan<ExecSpace, T, S, O>> weighted_;  // MaskMode::Weights: the plan that runs everything
  // MaskMode::Normalized: its stage pipeline's workspace
  StageConstants<T> constants_;
  AxisPasses passes_;
  Kokkos::View<T* [2], Mem> shifts_;
  PlaneStore<T, Mem> row_stats_, column_stats_, partials_;
  MapSumStore<Mem> sums_;  // of w * map, with the weights' sums (WeightSums, Reduction.hpp)
  int fused_rows_ = 0;     // > 0: the fused forward's tile rows (choose_normalized_forward)
};

// Defined outside the class so that kssim/Instantiate.hpp can compile them (and their kernels) once.
template <class ExecSpace, class T, class S, class O>
void MaskedPlan<ExecSpace, T, S, O>::forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                             const InputArray<S>& mask, const OutputArray<O>& map,
                                             float* value_float) const {
  check_mask_values(exec, MaskCheck<ExecSpace, S>{mask, sums().arrays.weights.invalid});
  const InputArray<S> m = broadcast_channels(mask, g_.c);
  if (weighted_) {
    weighted_->forward(exec, x, y, map, {.value_float = value_float, .map_weights = m});
    return;
  }
  compute_masked_shifts<ExecSpace>(exec, g_, x, y, m, shifts_.data());
  if (fused()) {
    FusedNormalizedForward<ExecSpace, T, S, O> k{};
    k.x = x;
    k.y = y;
    k.map_pass = map_pass(PlaneArray<T>{}, m, map);
    k.rows = fused_rows_;
    fused_normalized_forward(exec, opts_, k);
  } else {
    MaskedRowBlur<ExecSpace, T, S> k{};
    k.x = x;
    k.y = y;
    k.mask = m;
    k.shifts = shifts_.data();
    k.stats = plane_array(row_stats_);
    k.window = constants_.window;
    k.g = g_;
    masked_row_blur(exec, opts_, k);
    PlaneArray<T> map_input = plane_array(row_stats_);
    if (g_.volumetric) {
      masked_column_blur(
          exec, opts_, statistics_pass<MaskedColumnBlur<ExecSpace, T, MaskMode::Normalized, ColumnOutput::Statistics>>());
      map_input = plane_array(column_stats_);
    }
    masked_column_blur(exec, opts_, map_pass(map_input, m, map));
  }
  MapSums sums = sums_.arrays;
  sums.value_float = value_float;
  sum_map(exec, sums);
}

template <class ExecSpace, class T, class S, class O>
void MaskedPlan<ExecSpace, T, S, O>::backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                              const InputArray<S>& mask, const GradientTargets<O>& out) const {
  const bool want1 = out.grad1.data() != nullptr, want2 = out.grad2.data() != nullptr;
  if (!want1 && !want2) return;
  if ((want1 && !wanted_.image1) || (want2 && !wanted_.image2))
    throw std::invalid_argument("kssim: backward asked for a gradient this object was not set up to compute");
  const UpstreamFactor factor = out.upstream.times_factor(sums().arrays.weights.inverse);  // upstream / sum w
  if (weighted_) {  // the partials are of w * map: SSIM's backward, scaled by upstream / sum w
    weighted_->backward(exec, x, y, {out.grad1, out.grad2, out.scale, factor, out.accumulate},
                        broadcast_channels(mask, g_.c));
    return;
  }
  if (wanted_.count() == 4)
    backward_planes<4>(exec, x, y, broadcast_channels(mask, g_.c), out, factor);
  else
    backward_planes<3>(exec, x, y, broadcast_channels(mask, g_.c), out, factor);
}

}  // namespace kssim::impl
