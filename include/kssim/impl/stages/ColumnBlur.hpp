// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Forward stage 2, the column blur (and, for volumes, the depth blur): combine the four moment planes
// along a strided axis (LocalMoments.hpp). The last forward pass evaluates the SSIM map there and writes
// what the backward pass needs: the map's partial derivatives (MapFormula.hpp) and one partial sum of the
// map per team, summed later in a fixed order (Reduction.hpp) so the mean is bitwise reproducible. The map
// pass evaluates a Term (MapTerms.hpp): SSIM, or MS-SSIM's contrast-structure term, and stores the map in
// its type O (the compute type T, or a 16-bit type it is rounded to: Storage.hpp).

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/stages/LocalMoments.hpp>
#include <kssim/impl/stages/MapBlock.hpp>
#include <kssim/impl/stages/MapTerms.hpp>
#include <kssim/impl/stages/Reduction.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tuning.hpp>
#include <kssim/impl/stages/StageKernel.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

enum class ColumnOutput {
  Statistics,  // four moment planes (the H pass of a volume)
  Map          // map, partial derivatives and per-team sums (the last forward pass)
};

// A team of a forward axis pass, ColumnBlur or MaskedColumnBlur.hpp (their planes and formulas differ, this
// does not): stage the tile's Pass::staged_planes input planes with the window's halo, then
//  - ColumnOutput::Statistics: store k.combine<Taps>(tile, j0, i0, acc), the planes of a block of outputs;
//  - ColumnOutput::Map: sum k.evaluate<Taps>(tile, p, j0, i0, s1, s2), a block's sums (a Pass::MapSum), over
//    the tile and hand the team's total to k.store_sums(team index, total).
template <class ExecSpace, class T, int Taps, class Pass, class Team>
KOKKOS_FORCEINLINE_FUNCTION void run_forward_axis_pass(const Pass& k, const Team& team) {
  constexpr int K = Pass::staged_planes, rows = Pass::rows, chunk = Pass::chunk, tile_inner = Pass::tile_inner;
  const AxisPass& a = k.a;
  const AxisTilePosition p = axis_tile_position(a, team.league_rank(), a.tile_len, tile_inner);
  const int nc = p.outer / a.outer_per_image;
  const T s1 = k.shifts[2 * nc], s2 = k.shifts[2 * nc + 1];
  // Outside the input: the means are the recentred zero, -shift, and every other plane is 0 (OutsideMoments in
  // LocalMoments.hpp; the weight plane of normalized statistics: no weight).
  T fill[K] = {};
  fill[0] = -s1;
  fill[1] = -s2;
  const auto tile = AxisScratch<ExecSpace, T>::allocate(team, K, k.halo_len());
  stage_axis_tile<K, tile_inner>(team, tile, k.in, a, p, k.halo_len(), fill);
  team.team_barrier();

  if constexpr (Pass::output == ColumnOutput::Statistics) {
    compute_and_store_axis_tile<K, rows, chunk, T>(team, a, p, a.tile_len, tile_inner, k.out_stats,
                                                   [&](int j0, int i0, T(&acc)[K][rows][chunk]) {
                                                     k.template combine<Taps>(tile, j0, i0, acc);
                                                   });
  } else {
    // One flat range over (block of rows, chunk of columns), consecutive indices on consecutive lanes:
    // every thread and lane keeps its own running sum and the team reduces once (a nested thread /
    // lane reduction reduced the lanes once per block of rows).
    using Sum = typename Pass::MapSum;
    constexpr int lanes = tile_inner / chunk;
    Sum team_sum{};
    Kokkos::parallel_reduce(
        Kokkos::TeamVectorRange(team, a.tile_len / rows * lanes),
        [&](int e, Sum& sum) {
          const int j0 = e / lanes * rows, i0 = e % lanes * chunk;
          if (p.l0 + j0 >= a.len_out || p.i0 + i0 >= a.inner) return;
          sum += k.template evaluate<Taps>(tile, p, j0, i0, s1, s2);
        },
        Kokkos::Sum<Sum>(team_sum));
    Kokkos::single(Kokkos::PerTeam(team), [&]() { k.store_sums(team.league_rank(), team_sum); });
  }
}

// A team's partial sum of the map, tile_sums[tile]; the first team marks the results stale until sum_map
// writes them (Reduction.hpp).
KOKKOS_INLINE_FUNCTION void store_tile_sum(const MapSums& sums, int tile, double value) {
  sums.tile_sums[tile] = value;
  if (tile == 0) sums.invalidate_results();
}

template <class ExecSpace, class T, ColumnOutput Output, class Term = SsimTerm, class O = T>
struct ColumnBlur {
  KSSIM_AXIS_STAGE_TILES(ExecSpace, T);
  static constexpr ColumnOutput output = Output;
  static constexpr int staged_planes = moment_planes;
  using MapSum = double;  // a team's sum of the map

  // Only pointers, extents and PODs (KernelArrays.hpp).
  PlaneArray<T> in;                          // four moment planes
  PlaneArray<T> out_stats;                   // Statistics: four moment planes
  OutputArray<O> map;                        // Map: optional (null data to skip)
  PlaneArray<T> partials;                    // Map: optional, see PartialPlanes
  PartialPlanes wanted;
  MapSums sums;                              // Map: tile_sums gets one partial sum per team
  const T* shifts = nullptr;                         // (NC, 2), Recentring.hpp
  GaussianWindow<T> window;
  AxisPass a;
  Geometry g;
  T c1 = 0, c2 = 0;

  KOKKOS_INLINE_FUNCTION int halo_len() const { return a.tile_len + window.size - 1; }
  std::size_t scratch_bytes() const { return AxisScratch<ExecSpace, T>::bytes(moment_planes, halo_len()); }

  template <int Taps>  // see FixedTaps.hpp: run_forward_axis_pass with the combine, evaluate and store_sums below
  KOKKOS_FUNCTION void run(const Team& team) const { run_forward_axis_pass<ExecSpace, T, Taps>(*this, team); }

  KOKKOS_INLINE_FUNCTION int valid_in_chunk(const AxisTilePosition& p, int i0) const {
    return p.i0 + i0 + chunk <= a.inner ? chunk : a.inner - p.i0 - i0;
  }

  // Map values of one block of outputs (tile rows j0.., tile columns i0..): MapBlock.hpp.
  template <int Taps>
  KOKKOS_FORCEINLINE_FUNCTION double evaluate(const Scratch& tile, const AxisTilePosition& p, int j0, int i0, T s1,
                                              T s2) const {
    T acc[moment_planes][rows][chunk];
    combine_axis_tile<rows, chunk, Taps>(tile, window, j0, i0, acc);
    const int nu = valid_in_chunk(p, i0), l0 = p.l0 + j0;
    return evaluate_map_block<rows, chunk, Term>(
        acc, a.len_out - l0, nu, s1, s2, c1, c2, window, wanted, partials,
        [&](int q) { return a.out_index(p.outer, l0 + q, p.i0 + i0); },
        [&](int q, const T(&value)[chunk]) {
          if (map.data() != nullptr) store_map(p.outer, std::size_t(l0 + q) * a.inner + p.i0 + i0, value, nu);
        });
  }

  // `pos` is the flat position inside the (Do, Ho, Wo) map of slice `nc` of the first of n values. The
  // position is decoded once per chunk, then stepped along W (wrapping to the next row, for volumes): integer
  // divisions per value took a third of the map pass on hosts.
  KOKKOS_FORCEINLINE_FUNCTION void store_map(int nc, std::size_t pos, const T (&value)[chunk], int n) const {
    const int in = nc / g.c, ic = nc % g.c, rest = int(pos / std::size_t(g.ow));
    int ow = int(pos % std::size_t(g.ow)), oh = rest % g.oh, od = rest / g.oh;
    for (int u = 0; u < chunk; ++u) {
      if (u >= n) continue;
      map(in, ic, od, oh, ow) = to_storage<O>(value[u]);
      if (++ow == g.ow) {
        ow = 0;
        if (++oh == g.oh) oh = 0, ++od;
      }
    }
  }

  // Statistics: the moments of a block of outputs (tile rows j0.., tile columns i0..).
  template <int Taps>
  KOKKOS_FORCEINLINE_FUNCTION void combine(const Scratch& tile, int j0, int i0,
                                           T (&moments)[moment_planes][rows][chunk]) const {
    combine_axis_tile<rows, chunk, Taps>(tile, window, j0, i0, moments);
  }
  KOKKOS_INLINE_FUNCTION void store_sums(int team, double sum) const { store_tile_sum(sums, team, sum); }
};

// The map pass holds the statistics of several outputs and the map formula's temporaries: its launch bound asks
// for 16 / sizeof(T) teams per multiprocessor (four float teams: 64 registers per thread) rather than the
// compiler's two. More teams made the volumes' depth pass (the one map pass the router takes for float on GPUs)
// no faster: five float teams (20 bytes) fwd 0.96-1.05x, fwd+bwd 0.99-1.03x the time, six (24 bytes) 0.99-1.10x
// and 1.02-1.06x (1x1x128^3, 2x3x96^3, 1x1x256^3, both paddings; perf_tests/README.md, "Tried and rejected").
// KSSIM_TUNE_MAP_PASS_MIN_TEAMS (Tuning.hpp) replaces the 16, for tuning runs only.
template <class ExecSpace, class T, ColumnOutput Output, class Term, class O>
void column_blur(const ExecSpace& exec, const Options& opts, ColumnBlur<ExecSpace, T, Output, Term, O> k) {
  constexpr int map_teams = KSSIM_TUNE_MAP_PASS_MIN_TEAMS / int(sizeof(T));
  constexpr int min_teams = Output == ColumnOutput::Map && map_teams > 1 ? map_teams : 1;
  launch_stage<min_teams>(Output == ColumnOutput::Map ? Term::kernel_name : "kssim::column_blur_stats", exec, opts, k,
                          k.a.league_size(), k.a.tile_len, k.tile_inner);
}

}  // namespace kssim::impl
