// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// SSIM of problems larger than one pass of the kernels allows (2^30 elements: their flat indices are
// 32-bit, Plan.hpp's fits_one_call) or than a workspace budget (Options::max_workspace_bytes): the problem
// runs as a sequence of pieces, each one Plan call, in stream order on one execution space instance.
//  1. groups of whole images (slices are independent: no halo), or, when one image is too large,
//  2. groups of the channels of one image, or, when one slice is too large,
//  3. slabs of one (n, c) slice along its outermost spatial axis (D for volumes, H for images): each owns a
//     run of map rows and reads the input rows their windows cover (the window's halo); its padding along
//     that axis is its own (Geometry::pad_d / pad_h: zero padding only where the field ends).
// The 32-bit arithmetic stays inside the pieces; only the pieces' offsets into the user's arrays are
// 64-bit (pointer arithmetic on the host). A problem that fits runs as one piece: the Plan as it was.
//
// Masks (masked SSIM, MaskedPlan.hpp: map weights on SSIM's Plan, normalized statistics on NormalizedPlan) slab like
// the images: each piece reads its rows of the mask, and its slices' sums of w are accumulated beside those of
// w * map; normalized statistics' recentring shifts come from the masked pixels of the whole slices.
// Results: the slices' map sums are accumulated per slice in piece order and the total summed over the
// slices in order, by sum_map (Reduction.hpp) over one "tile" per slice. Groups of slices therefore give the unsliced result
// bitwise (each slice's tiles are the same); slabs of a slice add their sums, and their gradients where
// their input rows overlap (the halo rows), so they agree with it to rounding. Every piece uses its slices'
// recentring shifts (the whole slice's, Recentring.hpp), so the map is the unsliced one to rounding too.
// The gradient of a slab overwrites (Accumulate::No) the rows no earlier slab wrote, after they are zeroed,
// and adds to the rest.
// Workspace: the pieces' plans share the buffers of the largest one (PlanBuffers), so the budget bounds
// the largest piece's workspace. A training object's backward() recomputes each piece's forward partials
// (a slab's workspace holds one slab's), so fwd+bwd costs one more forward when sliced.

#include <kssim/Options.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/ssim/Plan.hpp>
#include <kssim/impl/ssim/PlanCache.hpp>
#include <kssim/impl/stages/Recentring.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kssim::impl {

// Workspace a problem may take when Options::max_workspace_bytes is 0: half the memory free now (on
// hosts, MemAvailable, at most an eighth of MemTotal), so that the caller's own arrays, already allocated,
// are left room (arrays allocated but not yet written count as available on Linux: with a quarter of
// MemTotal, a 1024^3 float pair and its two gradients peaked at 23.5 GB of a 24 GiB machine's 25.3). Asked only for problems whose workspace exceeds default_workspace_floor: smaller ones
// never slab by budget, and pay no query.
inline constexpr std::size_t default_workspace_floor = std::size_t(1) << 30;

inline std::size_t host_default_workspace_budget() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t value = 0, total = 0, available = 0;
  std::string unit;
  while (meminfo >> key >> value >> unit) {
    if (key == "MemTotal:") total = value * 1024;
    if (key == "MemAvailable:") available = value * 1024;
  }
  if (total == 0 || available == 0) return std::size_t(4) << 30;  // not Linux: a fixed 4 GiB
  return std::max(default_workspace_floor, std::min(available / 2, total / 8));
}

template <class ExecSpace>
std::size_t default_workspace_budget(const ExecSpace&) {
  std::size_t free = 0, total = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>)
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return std::max(default_workspace_floor, free / 2);
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>)
    if (hipMemGetInfo(&free, &total) == hipSuccess) return std::max(default_workspace_floor, free / 2);
#endif
  (void)free;
  (void)total;
  if constexpr (is_gpu_space_v<ExecSpace>) return std::size_t(4) << 30;
  else return host_default_workspace_budget();
}

// One piece of a sliced problem: slices n0 .. n0+nn-1 x c0 .. c0+cn-1; along the slab axis, the map rows
// [map0, map0 + map_rows) and the input rows [in0, in0 + in_rows) (the whole axis unless cut).
struct SlabPiece {
  int n0 = 0, nn = 0, c0 = 0, cn = 0;
  int map0 = 0, map_rows = 0, in0 = 0, in_rows = 0;
  int plan = 0;         // index into the plans
  int first_new_row = 0;  // slabs: input rows before this one were written by the slice's earlier slabs
  Geometry g;
};

// The slab axis of a rank-5 (N, C, D, H, W) array: D for volumes, H for images.
inline int slab_axis(const Geometry& g) { return g.volumetric ? 2 : 3; }

template <class A>
A piece_array(A a, const SlabPiece& p, int axis, bool map) {
  if (a.ptr == nullptr) return a;
  const int first = map ? p.map0 : p.in0;
  a.ptr += std::ptrdiff_t(p.n0) * a.str[0] + std::ptrdiff_t(p.c0) * a.str[1] + std::ptrdiff_t(first) * a.str[axis];
  a.ext[0] = p.nn;
  a.ext[1] = p.cn;
  a.ext[axis] = map ? p.map_rows : p.in_rows;
  return a;
}

// The small kernels of the slab driver, at namespace scope: nvcc's extended lambdas inside a member function
// of a class template ran as a null function on the host backends of a CUDA build (Kokkos 4.6.01).
// `to[i]` = `from[i]`, or += for a later slab of the slices.
template <class ExecSpace>
void add_slice_sums(const ExecSpace& exec, const double* from, double* to, int count, bool add) {
  launch("kssim::slab_sums", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
         KOKKOS_LAMBDA(int i) { to[i] = add ? to[i] + from[i] : from[i]; });
}

// Zeroes an array of at most one slab (its element count fits an int).
template <class ExecSpace, class T, class O>
void zero_array(const ExecSpace& exec, const OutputArray<O>& a) {
  if (a.ptr == nullptr) return;
  const int e1 = a.ext[1], e2 = a.ext[2], e3 = a.ext[3], e4 = a.ext[4];
  const int count = a.ext[0] * e1 * e2 * e3 * e4;
  launch("kssim::slab_zero", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), KOKKOS_LAMBDA(int i) {
    int r = i;
    const int w = r % e4;
    r /= e4;
    const int h = r % e3;
    r /= e3;
    const int d = r % e2;
    r /= e2;
    a(r / e1, r % e1, d, h, w) = to_storage<O>(T(0));
  });
}

// PiecePlan: the plan of one piece, SSIM's Plan, or masked SSIM's NormalizedPlan (masked/NormalizedPlan.hpp),
// whose recentring shifts come from the masked pixels and whose backward takes the mask (masked_statistics).
template <class ExecSpace, class T, class S = T, class O = S, class PiecePlan = Plan<ExecSpace, T, SsimTerm, S, O>>
class SlabPlan {
 public:
  using PlanT = PiecePlan;
  using Mem = typename ExecSpace::memory_space;
  static constexpr bool masked_statistics = requires { PlanT::masked_statistics; };

  // The problem as one piece, with a plan made elsewhere (the one-call functions' cache).
  SlabPlan(std::shared_ptr<const PlanT> whole, const Geometry& g) : g_(g) { single(std::move(whole)); }

  // Plans the pieces of problem g within opts' workspace budget (one piece when it fits); MapWeighting::Centre:
  // every forward and backward call takes the map weights (Plan.hpp).
  SlabPlan(const ExecSpace& exec, const Geometry& g, const Options& opts, PartialPlanes wanted,
           MapWeighting weighting = MapWeighting::None)
      : g_(g), weighting_(weighting) {
    if (!needs_slabs(exec, g, opts, wanted)) {
      single(make_plan(exec, g, opts, wanted, nullptr));
      return;
    }
    plan_pieces(exec, opts, wanted, budget(exec, opts));
  }

  // Whether problem g runs in more than one piece.
  static bool needs_slabs(const ExecSpace& exec, const Geometry& g, const Options& opts, PartialPlanes wanted) {
    if (!fits_one_call(g)) return true;
    const std::size_t bytes = PlanT::workspace_bytes(exec, g, opts, wanted);
    if (opts.max_workspace_bytes != 0) return bytes > opts.max_workspace_bytes;
    return bytes > default_workspace_floor && bytes > default_workspace_budget(exec);
  }

  // The budget a problem is split within: Options::max_workspace_bytes, or the default.
  static std::size_t budget(const ExecSpace& exec, const Options& opts) {
    return opts.max_workspace_bytes != 0 ? opts.max_workspace_bytes : default_workspace_budget(exec);
  }

  int pieces() const { return int(pieces_.size()); }
  bool sliced() const { return pieces_.size() > 1; }
  // Bytes of the workspace planes the plans hold (shared: the largest plan's).
  std::size_t workspace_bytes() const {
    const PlanBuffers<T, Mem> b = plans_[0]->buffers();
    return (b.row_stats.span() + b.column_stats.span() + b.partials.span()) * sizeof(T);
  }
  const Geometry& geometry() const { return g_; }
  const std::vector<SlabPiece>& piece_list() const { return pieces_; }

  // Sum of the map, mean and per-slice sums of the last forward (device); with map weights, the sums of
  // w * map, the weighted mean, and the weights' sums (map_sums(), WeightSums).
  const MapSumStore<Mem>& map_sums() const { return sliced() ? sums_ : plans_[0]->map_sums(); }
  Kokkos::View<const double, Mem> total() const { return map_sums().total; }
  Kokkos::View<const double, Mem> mean() const { return map_sums().mean; }
  Kokkos::View<const double*, Mem> image_sums() const { return map_sums().image_sums; }

  // Plan's forward terms (PassArguments.hpp): value_float, and the map weights of MapWeighting::Centre,
  // (N, C, D, H, W) of the images' extents; the recentring shifts are the whole problem's.
  void forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y, const OutputArray<O>& map,
               const ForwardTerms<T, S>& terms = {}) const {
    if (!sliced()) return plans_[0]->forward(exec, x, y, map, terms);
    if constexpr (masked_statistics)
      PlanT::masked_shifts(exec, g_, x, y, terms.map_weights, shifts_.data());
    else
      compute_shifts<ExecSpace>(exec, g_, x, y, shifts_.data());
    for (const SlabPiece& p : pieces_) forward_piece(exec, p, x, y, map, terms.map_weights);
    finish_sums(exec, terms.value_float);
  }

  // The gradients of the mean (GradientTargets, PassArguments.hpp) with respect to the images of the last
  // forward(); sliced problems recompute each piece's forward first.
  void backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                const GradientTargets<O>& out, const InputArray<S>& map_weights = {}) const {
    if (!sliced()) {
      if constexpr (masked_statistics) return plans_[0]->backward(exec, x, y, out, map_weights);
      else return plans_[0]->backward(exec, x, y, out, {.map_count = map_count()});
    }
    for (const SlabPiece& p : pieces_) {
      forward_piece(exec, p, x, y, {}, map_weights, false);
      backward_piece(exec, p, x, y, out, map_weights);
    }
  }

  // forward() and backward() in one sweep over the pieces (the one-call gradient functions).
  void forward_backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                        const GradientTargets<O>& out) const {
    // Its shifts and backward are SSIM's: normalized statistics would need the mask (forward, backward).
    static_assert(!masked_statistics, "kssim: internal error: forward_backward takes SSIM's plans only");
    if (!sliced()) {
      plans_[0]->forward(exec, x, y, {});
      return plans_[0]->backward(exec, x, y, out);
    }
    compute_shifts<ExecSpace>(exec, g_, x, y, shifts_.data());
    for (const SlabPiece& p : pieces_) {
      forward_piece(exec, p, x, y, {}, {});
      backward_piece(exec, p, x, y, out, {});
    }
    finish_sums(exec);
  }

 private:
  void single(std::shared_ptr<const PlanT> plan) {
    SlabPiece p;
    p.nn = g_.n;
    p.cn = g_.c;
    p.g = g_;
    pieces_.push_back(p);
    plans_.push_back(std::move(plan));
  }


  // The geometry of slices [nn x cn] of `whole` with, along the slab axis, map rows [map0, map0 + rows).
  static Geometry piece_geometry(const Geometry& whole, int nn, int cn, int map0, int rows,
                                 SlabPiece* piece = nullptr) {
    Geometry g = whole;
    g.n = nn;
    g.c = cn;
    int& len_in = g.volumetric ? g.d : g.h;
    int& len_map = g.volumetric ? g.od : g.oh;
    int& pad = g.volumetric ? g.pad_d : g.pad_h;
    const int full_in = len_in, full_pad = pad;
    const int in0 = std::max(0, map0 - full_pad);
    const int in_end = std::min(full_in, map0 + rows + (g.window - 1 - full_pad));
    len_in = in_end - in0;
    len_map = rows;
    pad = full_pad + in0 - map0;
    if (piece) {
      piece->map0 = map0;
      piece->map_rows = rows;
      piece->in0 = in0;
      piece->in_rows = in_end - in0;
    }
    return g;
  }

  void plan_pieces(const ExecSpace& exec, const Options& opts, PartialPlanes wanted, std::size_t budget) {
    pieces_ = split(exec, g_, opts, wanted, budget);
    plan_shapes(exec, opts, wanted);
  }

 public:
  // The pieces of problem `whole` within `budget` bytes of workspace (plans not made: no allocation).
  static std::vector<SlabPiece> split(const ExecSpace& exec, const Geometry& whole, const Options& opts,
                                      PartialPlanes wanted, std::size_t budget) {
    std::vector<SlabPiece> pieces;
    const auto fits = [&](const Geometry& g) {
      return fits_one_call(g) && PlanT::workspace_bytes(exec, g, opts, wanted) <= budget;
    };
    // The largest count in [1, most] for which make(count) fits (the workspace grows with it), or 0.
    const auto largest = [&](int most, const auto& make) {
      int lo = 0, hi = most;
      while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (fits(make(mid))) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const int map_len = whole.volumetric ? whole.od : whole.oh;
    const int images = largest(whole.n, [&](int k) { return piece_geometry(whole, k, whole.c, 0, map_len); });
    const int channels = images > 0 ? whole.c : largest(whole.c, [&](int k) { return piece_geometry(whole, 1, k, 0, map_len); });
    // Slabs: sized by an interior slab (the largest: the whole halo inside the field).
    const int rows = channels > 0 ? map_len : largest(map_len, [&](int r) {
      Geometry g = piece_geometry(whole, 1, 1, 0, r);
      int& len_in = g.volumetric ? g.d : g.h;
      int& pad = g.volumetric ? g.pad_d : g.pad_h;
      len_in = r + g.window - 1;
      pad = 0;
      return g;
    });
    if (rows == 0) {
      const Geometry g = piece_geometry(whole, 1, 1, 0, 1);
      std::ostringstream s;
      s << "kssim: this problem cannot be split within the workspace budget: one map row of one slice (a slab of "
        << (g.volumetric ? g.d : g.h) << " input planes) needs " << PlanT::workspace_bytes(exec, g, opts, wanted)
        << " bytes of workspace" << (fits_one_call(g) ? "" : " and more than 2^30 elements") << ", the budget is "
        << budget << " bytes (Options::max_workspace_bytes)";
      throw std::invalid_argument(s.str());
    }
    const int step_n = std::max(images, 1), step_c = images > 0 ? whole.c : std::max(channels, 1);
    for (int n0 = 0; n0 < whole.n; n0 += step_n)
      for (int c0 = 0; c0 < whole.c; c0 += step_c) {
        int written = 0;  // input rows of this slice written by its earlier slabs
        for (int m0 = 0; m0 < map_len; m0 += rows) {
          SlabPiece p;
          p.n0 = n0;
          p.nn = std::min(step_n, whole.n - n0);
          p.c0 = c0;
          p.cn = std::min(step_c, whole.c - c0);
          p.g = piece_geometry(whole, p.nn, p.cn, m0, std::min(rows, map_len - m0), &p);
          p.first_new_row = std::max(written, p.in0);
          written = p.in0 + p.in_rows;
          pieces.push_back(p);
        }
      }
    return pieces;
  }

 private:
  void plan_shapes(const ExecSpace& exec, const Options& opts, PartialPlanes wanted) {
    // One plan per distinct piece shape; the largest first, whose buffers the others share.
    std::vector<int> order(pieces_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return PlanT::workspace_bytes(exec, pieces_[a].g, opts, wanted) >
             PlanT::workspace_bytes(exec, pieces_[b].g, opts, wanted);
    });
    std::vector<Geometry> shapes;
    PlanBuffers<T, Mem> shared;
    for (int i : order) {
      SlabPiece& p = pieces_[i];
      int found = -1;
      for (std::size_t k = 0; k < shapes.size(); ++k)
        if (same_problem(shapes[k], p.g)) found = int(k);
      if (found < 0) {
        found = int(shapes.size());
        shapes.push_back(p.g);
        plans_.push_back(make_plan(exec, p.g, opts, wanted, plans_.empty() ? nullptr : &shared));
        if (plans_.size() == 1) shared = plans_[0]->buffers();
      }
      p.plan = found;
    }
    shifts_ = Kokkos::View<T*, Mem>(Kokkos::view_alloc(exec, "kssim::slab_shifts"), 2 * std::size_t(g_.images()));
    // One "tile" per slice: the pieces add their slice sums into the tile sums, and sum_map finishes.
    sums_ = MapSumStore<Mem>(exec, g_.images(), 1, double(g_.map_size()));
    if (weighting_ == MapWeighting::Centre || masked_statistics) sums_.add_weights(exec);
    // The one-call functions return before their kernels end (GPUs): the workspace outlives them.
    fence_before_free_ = std::shared_ptr<void>(nullptr, [exec](void*) { exec.fence("kssim: slab workspace freed"); });
  }

  int first_slice(const SlabPiece& p) const { return p.n0 * g_.c + p.c0; }

  std::shared_ptr<const PlanT> make_plan(const ExecSpace& exec, const Geometry& g, const Options& opts,
                                         PartialPlanes wanted, const PlanBuffers<T, Mem>* reuse) const {
    if constexpr (masked_statistics) return std::make_shared<const PlanT>(exec, g, opts, wanted, reuse);
    else return std::make_shared<const PlanT>(exec, g, opts, wanted, true, WithL1::No, reuse, weighting_);
  }

  // The piece's forward, with its slices' shifts; `sums`: add its map sums (and weight sums) to the slices'.
  void forward_piece(const ExecSpace& exec, const SlabPiece& p, const InputArray<S>& x, const InputArray<S>& y,
                     const OutputArray<O>& map, const InputArray<S>& map_weights, bool sums = true) const {
    const int axis = slab_axis(g_);
    const PlanT& plan = *plans_[p.plan];
    plan.forward(exec, piece_array(x, p, axis, false), piece_array(y, p, axis, false), piece_array(map, p, axis, true),
                 {.shifts = shifts_.data() + 2 * std::size_t(first_slice(p)),
                  .map_weights = piece_array(map_weights, p, axis, false)});
    if (!sums) return;
    const MapSums& piece = plan.map_sums().arrays;
    add_slice_sums(exec, piece.image_sums, sums_.arrays.tile_sums + first_slice(p), p.nn * p.cn, p.map0 > 0);
    if (piece.weights.image_sums)
      add_slice_sums(exec, piece.weights.image_sums, sums_.arrays.weights.tile_sums + first_slice(p), p.nn * p.cn,
                     p.map0 > 0);
  }

  // The map pixels the mean is over: the whole problem's (a slab's plan knows only its own), or 1 for the
  // weighted means, whose division by sum w is the caller's upstream factor (MaskedPlan.hpp).
  double map_count() const {
    return weighting_ == MapWeighting::Centre || masked_statistics ? 1.0 : double(g_.map_size());
  }

  void backward_piece(const ExecSpace& exec, const SlabPiece& p, const InputArray<S>& x, const InputArray<S>& y,
                      const GradientTargets<O>& out, const InputArray<S>& map_weights) const {
    const int axis = slab_axis(g_);
    const bool later_slab = p.map0 > 0;
    if (later_slab && !out.accumulate) {  // rows no earlier slab of the slice wrote: zero, then add to every row
      SlabPiece fresh = p;
      fresh.in0 = p.first_new_row;
      fresh.in_rows = p.in0 + p.in_rows - p.first_new_row;
      zero_array<ExecSpace, T>(exec, piece_array(out.grad1, fresh, axis, false));
      zero_array<ExecSpace, T>(exec, piece_array(out.grad2, fresh, axis, false));
    }
    const GradientTargets<O> piece{.grad1 = piece_array(out.grad1, p, axis, false),
                                   .grad2 = piece_array(out.grad2, p, axis, false),
                                   .scale = out.scale,
                                   .upstream = out.upstream,
                                   .accumulate = out.accumulate || later_slab};
    const InputArray<S> px = piece_array(x, p, axis, false), py = piece_array(y, p, axis, false);
    if constexpr (masked_statistics)
      plans_[p.plan]->backward(exec, px, py, piece, piece_array(map_weights, p, axis, false));
    else
      plans_[p.plan]->backward(exec, px, py, piece, {.map_count = map_count()});
  }

  void finish_sums(const ExecSpace& exec, float* value_float = nullptr) const {
    MapSums sums = sums_.arrays;
    sums.value_float = value_float;
    sum_map(exec, sums);
  }

 private:
  Geometry g_;
  MapWeighting weighting_ = MapWeighting::None;
  std::vector<SlabPiece> pieces_;
  std::vector<std::shared_ptr<const PlanT>> plans_;
  Kokkos::View<T*, Mem> shifts_;
  MapSumStore<Mem> sums_;  // sliced problems: per slice, one "tile" sum
  std::shared_ptr<void> fence_before_free_;  // last member: the first destroyed, before the workspace
};

// The plan of a one-call function: the cached plan of the whole problem, or, for a problem too large for
// one, its pieces (Slabs.hpp).
template <class ExecSpace, class T, class S = T, class O = S>
SlabPlan<ExecSpace, T, S, O> one_call_plan(const ExecSpace& exec, const Geometry& g, const Options& opts,
                                           PartialPlanes wanted = {}) {
  if (SlabPlan<ExecSpace, T, S, O>::needs_slabs(exec, g, opts, wanted)) return {exec, g, opts, wanted};
  return {cached_plan<ExecSpace, T, S, O>(exec, g, opts, wanted), g};
}

}  // namespace kssim::impl
