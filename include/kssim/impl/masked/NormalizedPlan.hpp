// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Masked SSIM with normalized statistics (MaskMode::Normalized) for one problem shape that fits one pass of the
// kernels: its forward fused for images (FusedNormalizedForward.hpp), else the stage schedule with a fifth plane
// (MaskedRowBlur, MaskedColumnBlur), as the router chooses (choose_normalized_forward); the adjoint passes are
// Plan's kernels (AdjointRow's PixelWeights instance: the mask at each pixel, a compile-time weight).
// It has Plan's shape for SlabPlan (Slabs.hpp), which runs larger problems in pieces of it: the same forward
// terms (the mask as the map weights, the recentring shifts of a larger problem's slices), buffers shared
// between pieces, and the workspace it would take before it is made. Its backward takes the mask and the
// gradients' device factor upstream / sum w of the whole problem (MaskedPlan.hpp).

#include <kssim/Options.hpp>
#include <kssim/impl/masked/MaskedColumnBlur.hpp>
#include <kssim/impl/masked/MaskedRowBlur.hpp>
#include <kssim/impl/schedules/Router.hpp>
#include <kssim/impl/ssim/Plan.hpp>
#include <kssim/impl/stages/AxisPasses.hpp>

#include <Kokkos_Core.hpp>
#include <string>

namespace kssim::impl {

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

// compute_shifts (Recentring.hpp) of the pixels where the mask is > 0; `mask` has the images' channels
// (broadcast: stride 0).
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
class NormalizedPlan {
 public:
  using Mem = typename ExecSpace::memory_space;
  // SlabPlan: shifts from the masked pixels, and a backward that takes the mask.
  static constexpr bool masked_statistics = true;

  // `reuse`: another plan's buffers, used where large enough (PlanBuffers, Plan.hpp).
  NormalizedPlan(const ExecSpace& exec, const Geometry& g, const Options& opts, PartialPlanes wanted,
                 const PlanBuffers<T, Mem>* reuse = nullptr)
      : g_(row_pitched<ExecSpace, T>(g)), opts_(opts), wanted_(wanted) {
    if (!fits_one_call(g_))
      throw std::logic_error("kssim: internal error: a normalized plan past 2^30 elements (SlabPlan splits those)");
    ensure_self_checked<ExecSpace, T>(exec);
    constants_ = StageConstants<T>::of(opts, g.volumetric);
    passes_ = make_axis_passes<ExecSpace, T>(exec, g_, masked_planes);
    fused_rows_ = choose_normalized_forward<ExecSpace, T>(exec, g_, opts);
    shifts_ = Kokkos::View<T* [2], Mem>(Kokkos::view_alloc(exec, "kssim::shifts"), g.images());
    const BufferSizes b = buffer_sizes(g_, fused_rows_ > 0, wanted);
    row_stats_ = take_buffer(exec, reuse ? &reuse->row_stats : nullptr, "kssim::row_stats", b.row_planes, b.row_stats);
    column_stats_ = take_buffer(exec, reuse ? &reuse->column_stats : nullptr, "kssim::column_stats", masked_planes,
                                b.column_stats);
    partials_ = take_buffer(exec, reuse ? &reuse->partials : nullptr, "kssim::partials", wanted.count(), b.partials);
    const AxisPass& last = g.volumetric ? passes_.depth : passes_.column;
    const int tiles = fused() ? FusedNormalizedForward<ExecSpace, T>::tiles_per_image(g_, fused_rows_)
                              : last.tiles_per_outer() * last.outer_per_image;
    sums_ = MapSumStore<Mem>(exec, g.images(), tiles, 1.0);
    sums_.add_weights(exec);
  }

  // Bytes a plan for `g` allocates, before it is made (SlabPlan's budget).
  static std::size_t workspace_bytes(const ExecSpace& exec, const Geometry& g, const Options& opts,
                                     PartialPlanes wanted) {
    const Geometry pitched = row_pitched<ExecSpace, T>(g);
    const BufferSizes b = buffer_sizes(pitched, choose_normalized_forward<ExecSpace, T>(exec, pitched, opts) > 0, wanted);
    // The weights' sums beside the map's.
    return (b.row_planes * b.row_stats + masked_planes * b.column_stats + wanted.count() * b.partials) * sizeof(T) +
           small_workspace_bytes<T>(pitched, 6, 2);
  }

  // The recentring shifts of problem g from its masked pixels (SlabPlan: those of the whole problem).
  static void masked_shifts(const ExecSpace& exec, const Geometry& g, const InputArray<S>& x, const InputArray<S>& y,
                            const InputArray<S>& mask, T* shifts) {
    compute_masked_shifts<ExecSpace>(exec, g, x, y, mask, shifts);
  }

  const Geometry& geometry() const { return g_; }
  PlanBuffers<T, Mem> buffers() const { return {row_stats_, column_stats_, partials_}; }
  // The sums of w * map and of w, the mean and the mask's flag of the last forward().
  const MapSumStore<Mem>& map_sums() const { return sums_; }

  // terms.map_weights: the mask, with the images' channels (broadcast: stride 0); terms.shifts: the
  // recentring shifts of a larger problem's slices, or null for this problem's own; terms.value_float: where the
  // mean goes, rounded to float, too. `map` may be empty.
  void forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const OutputArray<O>& map,
               const ForwardTerms<T, S>& terms) const;

  // The gradients (GradientTargets, PassArguments.hpp; out.upstream carries 1 / sum w) from the partials of the
  // last forward(); `mask` as forward's.
  void backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const GradientTargets<O>& out,
                const InputArray<S>& mask) const {
    if (wanted_.count() == 4)
      backward_planes<4>(exec, x, y, mask, out);
    else
      backward_planes<3>(exec, x, y, mask, out);
  }

 private:
  bool fused() const { return fused_rows_ > 0; }  // the fused normalized forward

  // Elements per plane of the workspace arrays (0: not needed) and the row planes' count.
  struct BufferSizes {
    int row_planes = 0;
    std::size_t row_stats = 0, column_stats = 0, partials = 0;
  };
  static BufferSizes buffer_sizes(const Geometry& g, bool fused, PartialPlanes wanted) {
    BufferSizes b;
    // The row planes: the stage forward's five; the fused forward's backward uses them for its adjoint column
    // pass's output only.
    b.row_planes = !fused ? masked_planes : wanted.any() ? wanted.count() : 0;
    if (b.row_planes > 0) b.row_stats = g.row_plane_size();
    if (g.volumetric) b.column_stats = g.column_plane_size();
    if (wanted.any()) b.partials = g.volumetric ? g.map_size() : g.padded_map_size();
    return b;
  }

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
  void backward_planes(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const InputArray<S>& m,
                       const GradientTargets<O>& out) const {
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
    // The pixel weights are the mask (normalized statistics: d B(m x) / dx = m B^T).
    adjoint_row(exec, opts_,
                AdjointRow<ExecSpace, T, K, true, false, S, O>{
                    .in = plane_array(row_stats_), .wanted = wanted_, .x = x, .y = y, .grad1 = out.grad1,
                    .grad2 = out.grad2, .shifts = shifts_.data(), .upstream = out.upstream, .pixel_weights = m,
                    .scale = out.scale, .accumulate = out.accumulate, .window = constants_.reversed, .g = g_});
  }

  Geometry g_;
  Options opts_;
  PartialPlanes wanted_;
  StageConstants<T> constants_;
  AxisPasses passes_;
  Kokkos::View<T* [2], Mem> shifts_;
  PlaneStore<T, Mem> row_stats_, column_stats_, partials_;
  MapSumStore<Mem> sums_;  // of w * map, with the weights' sums (WeightSums, Reduction.hpp)
  int fused_rows_ = 0;     // > 0: the fused forward's tile rows (choose_normalized_forward)
};

template <class ExecSpace, class T, class S, class O>
void NormalizedPlan<ExecSpace, T, S, O>::forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                                 const OutputArray<O>& map, const ForwardTerms<T, S>& terms) const {
  const InputArray<S>& m = terms.map_weights;
  if (terms.shifts)
    copy_shifts(exec, terms.shifts, shifts_.data(), 2 * g_.images());
  else
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
  sums.value_float = terms.value_float;
  sum_map(exec, sums);
}

}  // namespace kssim::impl
