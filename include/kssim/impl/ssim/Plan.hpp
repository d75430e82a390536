// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// One SSIM problem shape with its workspace: runs the forward and backward passes on unified rank-5
// arrays with the schedules the router chose (Router.hpp): the stage schedule (row blur, column blur, and
// for volumes the depth blur; adjoint depth, adjoint column, adjoint row: one kernel each) or the fused
// schedules (schedules/: one kernel per pass; volumes: one per depth slice around the depth pass's stages,
// FusedSlices.hpp). Allocates only in its constructor. The map evaluates `Term`
// (MapTerms.hpp): the SSIM map, or MS-SSIM's contrast-structure term (MsSsimPlan.hpp), with Window::Float32
// either one of the raw window's moments (RawWindowTerm<Term>, kernels of its own). A plan made
// WithL1::Yes also computes the fused L1 + SSIM loss inside the same kernels (L1Term.hpp); a plan made
// MapWeighting::Centre weighs each map pixel by a mask at its window's centre (masked SSIM's MaskMode::Weights,
// MaskedPlan.hpp): the map pass writes the partials of w * map and sums w * map and w, so its backward is
// the unweighted one with the factor 1 / sum w. The images are
// stored as S, the map and the gradients as O, the kernels compute in T (Storage.hpp: S and O are T, or
// 16-bit types converted where the kernels load and store them).

#include <kssim/Options.hpp>
#include <kssim/impl/stages/AdjointColumn.hpp>
#include <kssim/impl/stages/AdjointRow.hpp>
#include <kssim/impl/stages/AxisPasses.hpp>
#include <kssim/impl/stages/BoundaryFold.hpp>
#include <kssim/impl/stages/ColumnBlur.hpp>
#include <kssim/impl/masked/MaskedColumnBlur.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/stages/Recentring.hpp>
#include <kssim/impl/stages/Reduction.hpp>
#include <kssim/impl/schedules/FusedSlices.hpp>
#include <kssim/impl/schedules/Router.hpp>
#include <kssim/impl/stages/RowBlur.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/PassArguments.hpp>
#include <kssim/impl/core/Tuning.hpp>
#include <kssim/impl/core/UpstreamFactor.hpp>

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kssim::impl {

// The geometry with the row-pass planes' rows padded to a whole number of row chunks, and of quads, so
// that every chunk of a row pass starts aligned (vector stores on GPUs) and the axis passes can stage
// whole rows with 128-bit loads (AxisTile.hpp).
// On GPUs a pitch of a multiple of 32 elements (rows 128 bytes apart for float: the same-padding maps of
// 1920-, 3840-, 4096- and 512-wide images) gets 16 more: with it the fused backward, which stages 42 rows of
// the partial-derivative planes at the same columns, ran 7% slower in same padding than in valid (ncu, 1080p,
// 86.8 against 80.9 us, the same instructions), and the same-padding fwd+bwd took 2.0-2.6% more on the four large
// shapes than with 16 more (4 more: 1.1-2.0%; valid unchanged: perf_tests/README.md, "Kernel variants").
// KSSIM_TUNE_ROW_PITCH_SKEW (Tuning.hpp) replaces the 16 (0: none), for A/B runs.
template <class ExecSpace, class T>
Geometry row_pitched(Geometry g) {
  constexpr int chunk = Tiles<ExecSpace, T>::row_chunk < 4 ? 4 : Tiles<ExecSpace, T>::row_chunk;
  static_assert(KSSIM_TUNE_ROW_PITCH_SKEW % 4 == 0, "kssim: the pitch skew keeps rows of whole quads");
  g.row_pitch = ceil_div(g.ow, chunk) * chunk;
  if constexpr (gpu_code_paths_v<ExecSpace>)
    if (g.row_pitch % 32 == 0) g.row_pitch += KSSIM_TUNE_ROW_PITCH_SKEW;
  return g;
}

// What the stages of a plan (Plan, MaskedPlan.hpp) read from the options: the Gaussian window, its reverse
// (the adjoint passes'), and SSIM's constants C1 = (k1 L)^2, C2 = (k2 L)^2.
template <class T>
struct StageConstants {
  GaussianWindow<T> window{}, reversed{};
  T c1 = 0, c2 = 0;

  static StageConstants of(const Options& opts, bool volumetric) {
    StageConstants k;
    k.window = make_gaussian_window<T>(opts.window_size, opts.sigma, opts.window, volumetric ? 3 : 2);
    k.reversed = k.window.reversed();
    k.c1 = T((opts.k1 * opts.data_range) * (opts.k1 * opts.data_range));
    k.c2 = T((opts.k2 * opts.data_range) * (opts.k2 * opts.data_range));
    return k;
  }
};

// Defined in SelfCheck.hpp (included at the end of this file): the first-use check of the pipeline.
template <class ExecSpace, class T>
void ensure_self_checked(const ExecSpace& exec);

// Whether a plan computes the L1 term of the fused L1 + SSIM loss (kssim/L1SSIMLoss.hpp) beside SSIM.
enum class WithL1 { No, Yes };

// How a plan's map pixels count in its mean: once each, or weighted by the mask at their window's centre
// (ForwardTerms::map_weights, of the images' storage type; SSIM's plans only).
enum class MapWeighting { None, Centre };

// The large workspace arrays of a plan. Plans that run one after the other on one execution space instance
// and keep nothing between calls (the slabs of a large problem, Slabs.hpp) can share them: a plan made with
// another's buffers uses each one that is large enough instead of allocating its own.
template <class T, class Mem>
struct PlanBuffers {
  PlaneStore<T, Mem> row_stats, column_stats, partials;
};

// A plan's buffer of `planes` planes of `size` elements: `shared` (another plan's, or null) where it holds at
// least that many, else a new one; none for size 0.
template <class ExecSpace, class T, class Mem>
PlaneStore<T, Mem> take_buffer(const ExecSpace& exec, const PlaneStore<T, Mem>* shared, const char* name,
                               int planes, std::size_t size) {
  if (size == 0) return {};
  if (shared && int(shared->extent(0)) >= planes && shared->extent(1) >= size) return *shared;
  return PlaneStore<T, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(name)), planes, size);
}

// The small arrays of a plan's workspace, an upper estimate for SlabPlan's budget: the shifts, `image_doubles`
// sums per image and `tile_doubles` sums per 64 map pixels (the tiles' and teams' sums).
template <class T>
std::size_t small_workspace_bytes(const Geometry& pitched, int image_doubles, int tile_doubles) {
  return std::size_t(pitched.images()) * (2 * sizeof(T) + image_doubles * sizeof(double)) + 4096 +
         std::size_t(pitched.map_size()) / 64 * tile_doubles * sizeof(double);
}

// Whether a problem fits one pass of the kernels, whose flat indices are 32-bit (ints): at most 2^30
// elements per image array and per row-pass plane array. Larger problems run in slabs (Slabs.hpp).
inline constexpr std::size_t max_elements_per_call = std::size_t(1) << 30;
inline bool fits_one_call(const Geometry& g) {
  const std::size_t pitched_row_planes = std::size_t(g.images()) * g.d * g.h * (std::size_t(g.ow) + 64);
  return g.input_size() <= max_elements_per_call && pitched_row_planes <= max_elements_per_call;
}

// Defined in SelfCheck.hpp: the first-use layout check of the kernels of 16-bit images and outputs.
template <class ExecSpace, class T, class S, class O>
void ensure_storage_self_checked(const ExecSpace& exec);

template <class ExecSpace, class T, class Term = SsimTerm, class S = T, class O = S>
class Plan {
 public:
  using Mem = typename ExecSpace::memory_space;

  // `self_check` is false only for the self-check's own plan.
  // `reuse`: another plan's buffers, used where large enough (PlanBuffers).
  Plan(const ExecSpace& exec, const Geometry& g, const Options& opts, PartialPlanes wanted, bool self_check = true,
       WithL1 l1 = WithL1::No, const PlanBuffers<T, Mem>* reuse = nullptr,
       MapWeighting weighting = MapWeighting::None)
      : g_(row_pitched<ExecSpace, T>(g)), opts_(opts), wanted_(wanted), weighted_(weighting == MapWeighting::Centre) {
    if (weighted_ && !weightable) throw std::logic_error("kssim: map weights need an SSIM plan");
    // The fused forward keeps no L1 sums beside the map weights' (FusedForward::l1_items), and no API asks for both.
    if (weighted_ && l1 != WithL1::No) throw std::logic_error("kssim: the L1 term takes no map weights");
    // Window::Float32's map kernels (RawWindowTerm) have no weighted form: refused here rather than run unweighted.
    if (weighted_ && opts.window != Window::Exact)
      throw std::invalid_argument("kssim: map weights (masked SSIM) take Window::Exact only");
    if (!fits_one_call(g_))
      throw std::invalid_argument(
          "kssim: more than 2^30 elements in one call: only SSIM (kssim::ssim*, kssim::SSIM) and masked SSIM's "
          "MaskMode::Weights split larger problems into slabs");
    if (self_check) {
      ensure_self_checked<ExecSpace, T>(exec);
      if constexpr (!std::is_same_v<S, T> || !std::is_same_v<O, T>) ensure_storage_self_checked<ExecSpace, T, S, O>(exec);
    }
    schedule_ = choose_schedule<ExecSpace, T>(exec, g_, opts, wanted);
    if (weighted_ && schedule_.fused_forward() && !g.volumetric) {
      // The weighted forward's tile holds a second set of item sums: the stage forward where it does not fit.
      const int rows = FusedTiles<ExecSpace, T>::fitting_rows(exec, [&](int r) {
        return FusedForward<ExecSpace, T, SsimTerm, T, T, true>::scratch_bytes(r, g.window);
      });
      if (rows < schedule_.fused_forward_rows) {  // a lower tile, by the router's rules, or the stage forward
        const bool fits = rows > 0 && (opts.schedule == Schedule::Fused || rows >= g.window - 1);
        if (!fits && opts.schedule == Schedule::Fused)
          throw std::invalid_argument("kssim: the fused schedule cannot run this masked problem (its tile exceeds "
                                      "this backend's team scratch); use Schedule::Auto or Schedule::Stages");
        schedule_.fused_forward_rows = fits ? rows : 0;
        if (fits) schedule_.fused_forward_chain = fused_forward_chain<ExecSpace, T>(exec, g_, rows, wanted.any());
      }
      schedule_.fused_forward_finishes =
          schedule_.fused_forward() && fused_forward_finishes<ExecSpace, T>(exec, g_, schedule_.fused_forward_rows,
                                                                            schedule_.fused_forward_chain);
    }
    constants_ = StageConstants<T>::of(opts, g.volumetric);
    const AxisPasses passes = make_axis_passes<ExecSpace, T>(exec, g_, moment_planes);
    column_ = passes.column;
    adjoint_column_ = passes.adjoint_column;
    depth_ = passes.depth;
    adjoint_depth_ = passes.adjoint_depth;
    const AxisPass& last = g.volumetric ? depth_ : column_;

    shifts_ = Kokkos::View<T* [2], Mem>(Kokkos::view_alloc(exec, "kssim::shifts"), g.images());
    const BufferSizes sizes = buffer_sizes(g_, schedule_, wanted);
    row_stats_ = take_buffer(exec, reuse ? &reuse->row_stats : nullptr, "kssim::row_stats", moment_planes,
                             sizes.row_stats);
    column_stats_ = take_buffer(exec, reuse ? &reuse->column_stats : nullptr, "kssim::column_stats", moment_planes,
                                sizes.column_stats);
    partials_ =
        take_buffer(exec, reuse ? &reuse->partials : nullptr, "kssim::partials", wanted.count(), sizes.partials);
    // The map sums: one per tile of the fused forward (images), or per team of the last stage.
    const int fused_tiles =
        schedule_.fused_forward() ? FusedForward<ExecSpace, T>::tiles_per_image(g, schedule_.fused_forward_rows) : 0;
    const int map_sums_per_image = schedule_.fused_forward() && !g.volumetric
                                       ? fused_tiles
                                       : last.tiles_per_outer() * last.outer_per_image;
    // The L1 sums: one per tile of the fused forward (volumes: of each depth slice), or per (row, column tile)
    // of the row blur.
    const int l1_tiles_per_image = l1 == WithL1::No           ? 0
                                   : schedule_.fused_forward() ? g.d * fused_tiles
                                                               : g.d * g.h * ceil_div(g.ow, RowBlur<ExecSpace, T>::tile_cols);
    sums_ = MapSumStore<Mem>(exec, g.images(), map_sums_per_image, double(g.map_size()), l1_tiles_per_image,
                             double(g.input_size()));
    if (weighted_) sums_.add_weights(exec);
    if constexpr (BoundaryFold<ExecSpace, T, S, O>::whole) {
      if (g_.extends() && wanted.any()) {
        BoundaryFold<ExecSpace, T, S, O> fold{};
        fold.set_geometry(g_);
        frame_saved_ = Kokkos::View<O*, Mem>(Kokkos::view_alloc(exec, "kssim::frame_saved"), 2 * fold.frame_pixels());
      }
    }
  }

  // Elements per plane of the three workspace arrays (0: not needed) of a problem `g` (row-pitched).
  struct BufferSizes {
    std::size_t row_stats = 0, column_stats = 0, partials = 0;
  };
  static BufferSizes buffer_sizes(const Geometry& g, const ScheduleChoice& schedule, PartialPlanes wanted) {
    BufferSizes b;
    // The row planes: the stage schedule's forward output, and its adjoint column pass's output.
    if (!schedule.fused_forward() || (wanted.any() && !schedule.fused_backward())) b.row_stats = g.row_plane_size();
    if (g.volumetric) b.column_stats = g.column_plane_size();
    if (wanted.any()) b.partials = g.volumetric ? g.map_size() : g.padded_map_size();
    return b;
  }
  // Bytes a plan for `g` allocates, before it is made (the slab planner's budget, Slabs.hpp).
  static std::size_t workspace_bytes(const ExecSpace& exec, const Geometry& g, const Options& opts,
                                     PartialPlanes wanted) {
    const Geometry pitched = row_pitched<ExecSpace, T>(g);
    const BufferSizes b = buffer_sizes(pitched, choose_schedule<ExecSpace, T>(exec, pitched, opts, wanted), wanted);
    return (moment_planes * (b.row_stats + b.column_stats) + wanted.count() * b.partials) * sizeof(T) +
           small_workspace_bytes<T>(pitched, 4, 1);
  }
  PlanBuffers<T, Mem> buffers() const { return {row_stats_, column_stats_, partials_}; }

  const Geometry& geometry() const { return g_; }
  const ScheduleChoice& schedule() const { return schedule_; }
  PartialPlanes wanted() const { return wanted_; }
  // The mean of the map (weighted: sum w * map / sum w) and its sum per (n, c) slice, from the last forward().
  Kokkos::View<const double, Mem> mean() const { return sums_.mean; }
  Kokkos::View<const double*, Mem> image_sums() const { return sums_.image_sums; }
  // Plans MapWeighting::Centre: the sums above are of w * map, their mean the weighted one, and these are the
  // weights' sums (WeightSums, Reduction.hpp).
  const MapSumStore<Mem>& map_sums() const { return sums_; }
  // Plans WithL1::Yes: the loss of the last forward(), and its sum of |x - y| over every pixel.
  bool with_l1() const { return sums_.arrays.l1.tile_sums != nullptr; }
  Kokkos::View<const double, Mem> loss() const { return sums_.loss; }
  Kokkos::View<const double, Mem> l1_total() const { return sums_.l1_total; }

  // Forward stages. `map` may be empty. Partial derivatives are written when the plan wants gradients.
  void forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const OutputArray<O>& map,
               const ForwardTerms<T, S>& terms = {}) const;

  // Whether the map is of the raw window's moments (Window::Float32, RawWindow.hpp).
  bool raw_window() const { return constants_.window.raw_deficit != T(0); }

  // Backward stages: the gradients of the mean (GradientTargets, PassArguments.hpp) from the partials of the
  // last forward().
  void backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                const GradientTargets<O>& out, const BackwardTerms& terms = {}) const;

 private:
  // forward() with the map's term MapTerm: Term, or RawWindowTerm<Term> for Window::Float32.
  template <class MapTerm>
  void forward_with(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const OutputArray<O>& map,
                    const ForwardTerms<T, S>& terms) const;

  // Whether this plan type can weigh its map (MapWeighting): SSIM's map.
  static constexpr bool weightable = std::is_same_v<Term, SsimTerm>;

  template <int K, bool L1>
  void backward_planes(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                       const GradientTargets<O>& out, const BackwardTerms& terms, double count) const;
  // Reflect and Replicate padding: the gradients of the positions outside the image, added to the pixels they
  // read (BoundaryFold.hpp), after either schedule's backward.
  // The images, the gradients and their factors, in a kernel that stores gradients.
  template <class Kernel>
  void set_gradient_targets(Kernel& k, const InputArray<S>& x, const InputArray<S>& y, const GradientTargets<O>& out,
                            const BackwardTerms& terms, double count) const {
    k.x = x;
    k.y = y;
    k.grad1 = out.grad1;
    k.grad2 = out.grad2;
    k.shifts = shifts_.data();
    k.upstream = out.upstream;
    k.slice_factors = terms.slice_factors;
    k.scale = out.scale / count;
  }
  // `save`: 16-bit gradients that accumulate keep their values at the frame for it, before the backward.
  void fold_boundary(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                     const GradientTargets<O>& out, const BackwardTerms& terms, double count,
                     bool save = false) const;

  Geometry g_;
  Options opts_;
  PartialPlanes wanted_;
  bool weighted_ = false;  // MapWeighting::Centre
  ScheduleChoice schedule_;
  StageConstants<T> constants_;
  AxisPass column_, adjoint_column_, depth_, adjoint_depth_;
  Kokkos::View<T* [2], Mem> shifts_;  // (NC, 2): LayoutRight, so shifts_.data()[2 nc + k]
  PlaneStore<T, Mem> row_stats_, column_stats_, partials_;
  MapSumStore<Mem> sums_;  // MapWeighting::Centre: with the weights' sums
  Kokkos::View<O*, Mem> frame_saved_;     // 16-bit gradients, extending padding: BoundaryFold's saved values
};

// The stage sequences, defined outside the class so that kssim/Instantiate.hpp can compile them (and every
// kernel) once per (execution space, value type) in a program with many translation units.
template <class ExecSpace, class T, class Term, class S, class O>
void Plan<ExecSpace, T, Term, S, O>::forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                             const OutputArray<O>& map, const ForwardTerms<T, S>& terms) const {
  // Window::Float32: every term of the raw window's moments (pytorch-msssim's cs too), in kernels of its own.
  if (raw_window()) return forward_with<RawWindowTerm<Term>>(exec, x, y, map, terms);
  forward_with<Term>(exec, x, y, map, terms);
}

template <class ExecSpace, class T, class Term, class S, class O>
template <class MapTerm>
void Plan<ExecSpace, T, Term, S, O>::forward_with(const ExecSpace& exec, const InputArray<S>& x,
                                                  const InputArray<S>& y, const OutputArray<O>& map,
                                                  const ForwardTerms<T, S>& terms) const {
  if (terms.shifts)
    copy_shifts(exec, terms.shifts, shifts_.data(), 2 * g_.images());
  else
    compute_shifts<ExecSpace>(exec, g_, x, y, shifts_.data());
  MapSums sums = sums_.arrays;
  sums.l1.weight = terms.l1_weight;
  sums.value_float = terms.value_float;
  // What both schedules' map kernel writes, and reads besides its input.
  const auto set_map_outputs = [&](auto& k) {
    k.map = map;
    k.partials = plane_array(partials_);
    k.wanted = wanted_;
    k.sums = sums;
    k.shifts = shifts_.data();
    k.window = constants_.window;
    k.g = g_;
    k.c1 = constants_.c1;
    k.c2 = constants_.c2;
  };
  if (weighted_ && terms.map_weights.data() == nullptr)
    throw std::logic_error("kssim: a plan with map weights needs them in every forward call");
  if (schedule_.fused_forward() && !g_.volumetric) {
    const auto run_fused = [&](auto k) {
      k.x = x;
      k.y = y;
      set_map_outputs(k);
      k.rows = schedule_.fused_forward_rows;
      k.chain = schedule_.fused_forward_chain;
      k.finish = schedule_.fused_forward_finishes;
      fused_forward(exec, opts_, k);
      if (!k.finish) sum_map(exec, sums);
    };
    if constexpr (weightable && std::is_same_v<MapTerm, SsimTerm>) {
      if (weighted_) {
        FusedForward<ExecSpace, T, SsimTerm, S, O, true> k{};
        k.map_weights = terms.map_weights;
        run_fused(k);
        return;
      }
    }
    run_fused(FusedForward<ExecSpace, T, MapTerm, S, O>{});
    return;
  }
  if (schedule_.fused_forward()) {  // volumes, slice-fused (FusedSlices.hpp): the moments of every depth slice
    FusedForward<ExecSpace, T, SsimTerm, S, T> k{};
    k.x = x;
    k.y = y;
    k.statistics = plane_array(column_stats_);
    k.sums.l1 = sums.l1;
    k.shifts = shifts_.data();
    k.window = constants_.window;
    k.g = g_;
    k.rows = schedule_.fused_forward_rows;
    k.chain = schedule_.fused_forward_chain;
    fused_slice_statistics(exec, opts_, k);
  } else {
    RowBlur<ExecSpace, T, S> rows{x, y, shifts_.data(), plane_array(row_stats_), constants_.window, g_};
    rows.l1_tile_sums = sums.l1.tile_sums;
    row_blur(exec, opts_, rows);
    if (g_.volumetric) {
      ColumnBlur<ExecSpace, T, ColumnOutput::Statistics> k{};
      k.in = plane_array(row_stats_);
      k.out_stats = plane_array(column_stats_);
      k.shifts = shifts_.data();
      k.window = constants_.window;
      k.a = column_;
      k.g = g_;
      column_blur(exec, opts_, k);
    }
  }
  // The last pass evaluates the map: along D from the column planes (volumes), else along H from the row planes.
  const PlaneArray<T> last_in = plane_array(g_.volumetric ? column_stats_ : row_stats_);
  const AxisPass& last_axis = g_.volumetric ? depth_ : column_;
  if constexpr (weightable && std::is_same_v<MapTerm, SsimTerm>) {
    if (weighted_) {  // the map pass that weighs its pixels and sums the weights alongside
      MaskedColumnBlur<ExecSpace, T, MaskMode::Weights, ColumnOutput::Map, S, O> last{};
      last.in = last_in;
      last.a = last_axis;
      set_map_outputs(last);
      last.mask = terms.map_weights;
      masked_column_blur(exec, opts_, last);
      sum_map(exec, sums);
      return;
    }
  }
  ColumnBlur<ExecSpace, T, ColumnOutput::Map, MapTerm, O> last{};
  last.in = last_in;
  last.a = last_axis;
  set_map_outputs(last);
  column_blur(exec, opts_, last);
  sum_map(exec, sums);
}

template <class ExecSpace, class T, class Term, class S, class O>
void Plan<ExecSpace, T, Term, S, O>::backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                              const GradientTargets<O>& out, const BackwardTerms& terms) const {
  const double count = terms.map_count != 0 ? terms.map_count : double(g_.map_size());
  const bool want1 = out.grad1.data() != nullptr, want2 = out.grad2.data() != nullptr;
  if (!want1 && !want2) return;
  if ((want1 && !wanted_.image1) || (want2 && !wanted_.image2))
    throw std::invalid_argument("kssim: backward asked for a gradient this object was not set up to compute");
  // The L1 term's kernels are separate instances (AdjointRow.hpp), compiled for SSIM's plans only.
  constexpr bool l1_capable = std::is_same_v<Term, SsimTerm>;
  if (terms.l1_scale != 0 && !l1_capable) throw std::logic_error("kssim: the L1 term needs an SSIM plan");
  const bool l1 = l1_capable && terms.l1_scale != 0;
  BackwardTerms used = terms;
  if (!l1) used.l1_scale = 0;
  if (wanted_.count() == 4) {
    if (l1)
      backward_planes<4, l1_capable>(exec, x, y, out, used, count);
    else
      backward_planes<4, false>(exec, x, y, out, used, count);
  } else {
    if (l1)
      backward_planes<3, l1_capable>(exec, x, y, out, used, count);
    else
      backward_planes<3, false>(exec, x, y, out, used, count);
  }
}

template <class ExecSpace, class T, class Term, class S, class O>
template <int K, bool L1>
void Plan<ExecSpace, T, Term, S, O>::backward_planes(const ExecSpace& exec, const InputArray<S>& x,
                                                     const InputArray<S>& y, const GradientTargets<O>& out,
                                                     const BackwardTerms& terms, double count) const {
  fold_boundary(exec, x, y, out, terms, count, true);  // 16-bit gradients that accumulate: keep the frame's values
  // What both schedules' last kernel reads: the images, the gradients it writes and their factors.
  const auto set_gradient_inputs = [&](auto& k) {
    set_gradient_targets(k, x, y, out, terms, count);
    k.l1_scale = terms.l1_scale / double(g_.input_size());
    k.accumulate = out.accumulate;
    k.window = constants_.reversed;
    k.g = g_;
  };
  if (schedule_.fused_backward()) {
    FusedBackward<ExecSpace, T, K, L1, S, O> k{};
    k.partials = plane_array(partials_);
    if (g_.volumetric) {  // slice-fused (FusedSlices.hpp): the adjoint depth pass, then every depth slice
      adjoint_column(exec, opts_,
                     AdjointColumn<ExecSpace, T, K>{k.partials, plane_array(column_stats_), constants_.reversed,
                                                    adjoint_depth_});
      k.partials = plane_array(column_stats_);
    }
    set_gradient_inputs(k);
    k.rows = schedule_.fused_backward_rows;
    k.chain = schedule_.fused_backward_chain;
    fused_backward(exec, opts_, k);
    fold_boundary(exec, x, y, out, terms, count);
    return;
  }
  // The adjoint passes reuse the forward statistics planes as their outputs.
  PlaneArray<T> column_side = plane_array(partials_);
  if (g_.volumetric) {
    adjoint_column(exec, opts_,
                   AdjointColumn<ExecSpace, T, K>{column_side, plane_array(column_stats_), constants_.reversed,
                                                  adjoint_depth_});
    column_side = plane_array(column_stats_);
  }
  adjoint_column(exec, opts_,
                 AdjointColumn<ExecSpace, T, K>{column_side, plane_array(row_stats_), constants_.reversed,
                                                adjoint_column_});
  AdjointRow<ExecSpace, T, K, false, L1, S, O> k{};
  k.in = plane_array(row_stats_);
  k.wanted = wanted_;
  set_gradient_inputs(k);
  adjoint_row(exec, opts_, k);
  fold_boundary(exec, x, y, out, terms, count);
}

template <class ExecSpace, class T, class Term, class S, class O>
void Plan<ExecSpace, T, Term, S, O>::fold_boundary(const ExecSpace& exec, const InputArray<S>& x,
                                                   const InputArray<S>& y, const GradientTargets<O>& out,
                                                   const BackwardTerms& terms, double count, bool save) const {
  if (!g_.extends()) return;
  using Fold = BoundaryFold<ExecSpace, T, S, O>;
  if (save && !(Fold::whole && out.accumulate)) return;  // only 16-bit gradients keep what they held
  Fold k{};
  k.set_geometry(g_);
  if constexpr (Fold::whole) {
    if (out.accumulate) {
      k.saved1 = frame_saved_.data();
      k.saved2 = frame_saved_.data() + k.frame_pixels();
    }
  }
  k.save_only = save;
  k.partials = plane_array(partials_);
  k.wanted = wanted_;
  set_gradient_targets(k, x, y, out, terms, count);
  k.window = constants_.window;
  boundary_fold(exec, k);
}

}  // namespace kssim::impl

#include <kssim/impl/ssim/SelfCheck.hpp>  // defines ensure_self_checked (it builds Plans itself)
