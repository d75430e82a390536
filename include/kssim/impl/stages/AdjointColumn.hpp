// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Backward stage 1, the adjoint column (and, for volumes, adjoint depth) pass. The adjoint of a
// correlation over the valid (or zero-padded) extent is a full correlation with the reversed window:
// every input position gathers the map positions whose windows covered it, so no two threads write the
// same element and no atomics are needed. K planes of partial derivatives go in, K planes come out on
// the longer axis.

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/stages/StageKernel.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace, class T, int K>
struct AdjointColumn {
  KSSIM_AXIS_STAGE_TILES(ExecSpace, T);

  // Only pointers, extents and PODs (KernelArrays.hpp).
  PlaneArray<T> in;   // K planes on the map side of the forward pass
  PlaneArray<T> out;  // K planes on the input side of the forward pass
  GaussianWindow<T> window;  // already reversed
  AxisPass a;                // already the adjoint pass

  KOKKOS_INLINE_FUNCTION int halo_len() const { return a.tile_len + window.size - 1; }
  std::size_t scratch_bytes() const { return AxisScratch<ExecSpace, T>::bytes(K, halo_len()); }

  template <int Taps>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const AxisTilePosition p = axis_tile_position(a, team.league_rank(), a.tile_len, tile_inner);
    const T zero[K] = {};  // partial derivatives vanish outside the map
    const Scratch tile = AxisScratch<ExecSpace, T>::allocate(team, K, halo_len());
    stage_axis_tile<K, tile_inner>(team, tile, in, a, p, halo_len(), zero);
    team.team_barrier();
    correlate_and_store_axis_tile<K, rows, chunk, Taps, T>(team, tile, window, a, p, a.tile_len, tile_inner, out);
  }
};

template <class ExecSpace, class T, int K>
void adjoint_column(const ExecSpace& exec, const Options& opts, const AdjointColumn<ExecSpace, T, K>& k) {
  launch_stage("kssim::adjoint_column", exec, opts, k, k.a.league_size(), k.a.tile_len, k.tile_inner);
}

}  // namespace kssim::impl
