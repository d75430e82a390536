// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The slice-fused schedule for volumes (3D): the fused schedules' 2D kernels run on every depth slice, the
// depth pass stays a stage.
//   forward:  FusedForward with its Statistics output (SliceStatistics below): per depth slice, stage both
//             images, row blur and column blur in team scratch, then the four moment planes out, (NC * D, Ho,
//             Wo); the depth pass (ColumnBlur.hpp) blurs them along D and evaluates the map, as in the stage
//             schedule;
//   backward: the adjoint depth pass (AdjointColumn.hpp) into K planes of (NC * D, Ho, Wo), then FusedBackward
//             on every depth slice (adjoint column, adjoint row and the chain rule in team scratch).
// Bytes per voxel (float, valid, DRAM): the stage schedule's forward moves 8 in + 16 + 16 (row planes out
// and back) + 16 + 16 (column planes out and back); this one drops the row planes: 40 instead of 72. The
// backward likewise drops the adjoint column planes' round trip (8K bytes of its ~16K + 24).
// Which problems take it: Router.hpp (fused_slices_compiled: the kernels compiled for them).

#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Tuning.hpp>
#include <kssim/impl/schedules/FusedForward.hpp>
#include <kssim/impl/stages/MapTerms.hpp>

#include <stdexcept>

namespace kssim::impl {

// Whether this backend has the slice-fused forward kernel for a window of `window` taps and compute type T:
// hosts for every window; GPUs for the standard 11-tap window in float only (one kernel instance per 16-bit
// storage type: each costs a minute of nvcc; double's GPU tiles are shorter than the halo, as in 2D, and would
// not be chosen).
template <class ExecSpace, class T>
constexpr bool fused_slices_compiled(int window) {
  if constexpr (gpu_code_paths_v<ExecSpace>)
    return sizeof(T) == 4 && window == 11;
  else
    return true;
}

// The launch bound of the slice-fused forward (fused_min_teams): 16 bytes, 4 float teams per multiprocessor and
// 64 registers, as the training kernels (sm_90, ptxas -v: no spills; at 20 bytes, 5 teams, 48 registers and 8 / 12
// bytes of spill stores / loads). On the three volume shapes of perf_tests, both paddings, float: forwards
// 0.98-1.00x the time at 20 bytes, fwd+bwd 0.99-1.00x (perf_tests/README.md, "Kernel variants").
// KSSIM_TUNE_FUSED_SLICES_MIN_TEAMS (Tuning.hpp).

// FusedForward's run with the moment planes out instead of the map (volumes).
template <class Kernel>
using SliceStatistics = FusedForwardRun<Kernel, false, true>;

// Fills in the launch shape of k (its geometry: the volume's; rows, chain, statistics set) and runs the forward
// of every depth slice into k.statistics. The map's Term and type do not enter: one instance per (T, S).
template <class ExecSpace, class T, class S>
void fused_slice_statistics(const ExecSpace& exec, const Options& opts, FusedForward<ExecSpace, T, SsimTerm, S, T> k) {
  using K = FusedForward<ExecSpace, T, SsimTerm, S, T>;
  if (!fused_slices_compiled<ExecSpace, T>(k.window.size))
    throw std::logic_error("kssim: internal error: no slice-fused kernel for this window on this backend");
  set_fused_forward_shape(k, opts);
  const auto run = [&](const auto& kernel) {
    constexpr int min_teams = fused_min_teams<T, KSSIM_TUNE_FUSED_SLICES_MIN_TEAMS>;
    auto policy = make_team_policy<min_teams>(exec, k.league_size(), k.rows / K::col_rows, K::cols / K::col_chunk,
                                              K::Tile::scratch_level, k.scratch_size(), opts,
                                              kernel, Kokkos::ParallelForTag{});
    launch("kssim::fused_slice_statistics", policy, kernel);
  };
  using Kernel = SliceStatistics<K>;
  if constexpr (gpu_code_paths_v<ExecSpace>) {
    using L1Kernel = FusedForwardRun<K, false, true, true>;  // the fused loss's (FusedForward::l1_items)
    if constexpr (sizeof(T) == 4) {
      if (k.sums.l1.tile_sums) return run(FixedTaps<11, L1Kernel>{L1Kernel{k}});
      run(FixedTaps<11, Kernel>{Kernel{k}});
    }
  } else {
    run(FixedTaps<0, Kernel>{Kernel{k}});
  }
}

}  // namespace kssim::impl
