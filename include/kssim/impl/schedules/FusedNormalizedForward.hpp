// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The fused forward of masked SSIM with normalized statistics (MaskMode::Normalized) for images (2D): the
// stage schedule's masked row blur and map pass (MaskedRowBlur.hpp, MaskedColumnBlur.hpp) in one TeamPolicy
// kernel, tile by tile in team scratch, as FusedForward.hpp runs SSIM's. A team owns a chain of `chain` tiles of
// Rows x Cols map pixels down one column of tiles of one (n, c) slice (tile_chain, FusedForward.hpp) and, for
// each tile,
//   1. stages, over its tile plus the window's halo, the recentred pixels of both images (0 where the mask is
//      0: missing data may be NaN) and the mask (0 outside the image);
//   2. runs the masked row blur (masked_row_moments) over all Rows + window - 1 staged rows into the five
//      planes of MaskedMoments.hpp in scratch; after the first tile of a chain, the window - 1 halo rows come
//      from the previous tile (copied down in scratch: carry_halo_rows), so only Rows rows are staged and
//      row-blurred;
//   3. runs the map pass's own evaluation block by block on those planes (MaskedColumnBlur::evaluate: the
//      column blur of the five planes, the map, the partial derivatives of w * map, the sums of w * map and w),
//      and writes one sum of each per tile (so the mean does not depend on the chain).
// Bytes per map pixel (float, valid, DRAM): 12 in (both images and the mask; the map weights are the mask
// again, from the caches), against the stage schedule's 12 + 20 out (five row planes) + 20 back in.
// The price is the masked row blur over the halo rows: (chain Rows + window - 1) / (chain Rows) of it.

#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/masked/MaskedColumnBlur.hpp>
#include <kssim/impl/masked/MaskedMoments.hpp>
#include <kssim/impl/masked/MaskedRowBlur.hpp>
#include <kssim/impl/schedules/FusedForward.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

template <class ExecSpace, class T, class S = T, class O = T>
struct FusedNormalizedForward {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Tile = FusedTiles<ExecSpace, T>;  // SSIM's fused tile width and scratch level
  using Scratch = typename Tile::Scratch;
  using MapPass = MaskedColumnBlur<ExecSpace, T, MaskMode::Normalized, ColumnOutput::Map, S, O>;
  static constexpr int cols = Tile::cols, row_chunk = Tile::row_chunk;
  static constexpr int col_rows = MapPass::rows, col_chunk = MapPass::chunk;  // a block of the map pass
  static constexpr int staged_planes = 3;                                    // x', y', the mask
  static_assert(cols % row_chunk == 0 && cols % col_chunk == 0 && Tile::max_rows % col_rows == 0);

  // Only pointers, extents and PODs (KernelArrays.hpp).
  InputArray<S> x, y;
  // The map pass's mask, outputs, shifts, window, constants and AxisPass (the column pass of the stage
  // schedule: its partial-derivative layout is the one the backward reads). Its sums get one tile per team.
  MapPass map_pass;
  int rows = 0;   // map rows per tile (fused_normalized_rows)
  int chain = 1;  // vertically adjacent tiles per team (tile_chain)
  int tiles_x = 0, tiles_y = 0;

  static std::size_t scratch_bytes(int rows, int window) {
    const int halo_rows = rows + window - 1;
    return RowScratch<ExecSpace, T>::bytes(staged_planes, halo_rows, cols + window - 1) +
           RowScratch<ExecSpace, T>::bytes(masked_planes, halo_rows, cols);
  }
  int league_size() const { return map_pass.g.images() * tiles_x * ceil_div(tiles_y, chain); }
  // Tiles per (n, c) slice: each leaves one sum of w * map and one of w.
  static int tiles_per_image(const Geometry& g, int rows) { return ceil_div(g.ow, cols) * ceil_div(g.oh, rows); }

  template <int Taps>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const Geometry& g = map_pass.g;
    const int chains_y = (tiles_y + chain - 1) / chain, per_image = tiles_x * chains_y, rank = team.league_rank();
    const int nc = rank / per_image, in_image = rank - nc * per_image;
    const int first_tile = in_image / tiles_x * chain, tile_x = in_image % tiles_x, ox0 = tile_x * cols;
    const T s1 = map_pass.shifts[2 * nc], s2 = map_pass.shifts[2 * nc + 1];
    const int halo = tap_count<Taps>(map_pass.window) - 1, halo_rows = rows + halo;
    const Scratch staged = RowScratch<ExecSpace, T>::allocate(team, staged_planes, halo_rows, cols + halo);
    const Scratch moments = RowScratch<ExecSpace, T>::allocate(team, masked_planes, halo_rows, cols);

    for (int k = 0; k < chain; ++k) {
      const int tile_y = first_tile + k, oy0 = tile_y * rows;
      if (oy0 >= g.oh) break;  // the same for the whole team
      const int fresh = k == 0 ? 0 : halo;  // the first row this tile stages and row-blurs
      if (k > 0) carry_halo_rows<ExecSpace, T, masked_planes, cols>(team, moments, rows, halo);
      stage<Taps>(team, staged, nc, oy0 - g.pad_h, ox0 - g.pad_w, s1, s2, fresh);
      team.team_barrier();

      // The masked row blur of every staged row, one chunk of row_chunk outputs per work item.
      constexpr int row_lanes = cols / row_chunk;
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, (halo_rows - fresh) * row_lanes), [&](int e) {
        const int i = fresh + e / row_lanes, j0 = e % row_lanes * row_chunk;
        T m[masked_planes][row_chunk];
        masked_row_moments<row_chunk, Taps>(&staged(0, i, j0), &staged(1, i, j0), &staged(2, i, j0),
                                            map_pass.window, m);
        for (int p = 0; p < masked_planes; ++p) store_chunk<row_chunk>(&moments(p, i, j0), m[p], row_chunk);
      });
      team.team_barrier();

      // The map pass on the tile's planes: moment row i is input row oy0 - pad_h + i and column j map column
      // ox0 + j, as the stage schedule's column pass stages them for the tile at (oy0, ox0).
      constexpr int col_lanes = cols / col_chunk;
      const AxisTilePosition position{nc, oy0, ox0};
      WeightedSum tile_sum{};
      Kokkos::parallel_reduce(
          Kokkos::TeamVectorRange(team, rows / col_rows * col_lanes),
          [&](int e, WeightedSum& sum) {
            const int j0 = e / col_lanes * col_rows, i0 = e % col_lanes * col_chunk;
            if (oy0 + j0 >= g.oh || ox0 + i0 >= g.ow) return;
            sum += map_pass.template evaluate<Taps>(moments, position, j0, i0, s1, s2);
          },
          Kokkos::Sum<WeightedSum>(tile_sum));
      Kokkos::single(Kokkos::PerTeam(team),
                     [&]() { map_pass.store_sums((nc * tiles_y + tile_y) * tiles_x + tile_x, tile_sum); });
      team.team_barrier();  // the next tile overwrites the planes this one read
    }
  }

  // staged(0 / 1 / 2, i, j) = x', y', m at input row iy0 + i, column ix0 + j of slice nc, as MaskedRowBlur stages
  // them (MaskedRow), for rows i >= fresh. Every element of those padded rows is defined. A tile's rows lie in one
  // slice: each array's row is found from its (n, c, 0, row, 0) element (the mask's channels may be broadcast,
  // stride 0).
  template <int Taps>
  KOKKOS_INLINE_FUNCTION void stage(const Team& team, const Scratch& staged, int nc, int iy0, int ix0, T s1, T s2,
                                    int fresh) const {
    const Geometry& g = map_pass.g;
    const InputArray<S>& mask = map_pass.mask;
    constexpr int fixed_pitch = Taps > 0 ? RowScratch<ExecSpace, T>::pitch(cols + Taps - 1) : 0;
    const int halo_rows = int(staged.extent(1)), pitch = fixed_pitch > 0 ? fixed_pitch : int(staged.extent(2));
    const int n = nc / g.c, c = nc % g.c;
    const auto row = [&](int i) {
      const int iy = iy0 + i;
      if (iy < 0 || iy >= g.h) return MaskedRow<T, S>{nullptr, nullptr, nullptr, 1, 1, 1, g.w, s1, s2};
      return MaskedRow<T, S>{&x(n, c, 0, iy, 0), &y(n, c, 0, iy, 0), &mask(n, c, 0, iy, 0), x.stride(4),
                             y.stride(4),        mask.stride(4),     g.w,                   s1, s2};
    };
    if constexpr (Tile::gpu) {
      // One flat range: consecutive lanes load consecutive pixels (coalesced); with a compile-time tap count
      // the division by the pitch is a multiply and a shift.
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, (halo_rows - fresh) * pitch), [&](int e) {
        const int i = fresh + e / pitch, j = e % pitch;
        row(i).sample(ix0 + j, staged(0, i, j), staged(1, i, j), staged(2, i, j));
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, fresh, halo_rows), [&](int i) {
        row(i).segment(ix0, pitch, &staged(0, i, 0), &staged(1, i, 0), &staged(2, i, 0));
      });
    }
  }
};

// The tile height of the fused normalized forward for this window on this backend (0: its scratch does not
// fit, and the stage schedule runs).
template <class ExecSpace, class T>
int fused_normalized_rows(const ExecSpace& exec, int window) {
  using K = FusedNormalizedForward<ExecSpace, T>;
  return FusedTiles<ExecSpace, T>::fitting_rows(
      exec, [&](int rows) { return K::scratch_bytes(rows, window); }, K::col_rows);
}

// Fills in the launch shape of k (its rows must be set) and runs it.
template <class ExecSpace, class T, class S, class O>
void fused_normalized_forward(const ExecSpace& exec, const Options& opts, FusedNormalizedForward<ExecSpace, T, S, O> k) {
  using K = FusedNormalizedForward<ExecSpace, T, S, O>;
  const Geometry& g = k.map_pass.g;
  k.tiles_x = ceil_div(g.ow, K::cols);
  k.tiles_y = ceil_div(g.oh, k.rows);
  k.chain = tile_chain(exec, g, k.rows, K::cols,
                       fused_resident_teams<ExecSpace, T, KSSIM_TUNE_FUSED_NORMALIZED_MIN_TEAMS>(exec),
                       Kokkos::min(max_team_threads, k.rows / K::col_rows * (K::cols / K::col_chunk)),
                       k.map_pass.wanted.any());
  with_fixed_taps<ExecSpace>(k.map_pass.window.size, k, [&](const auto& kernel) {
    auto policy = make_team_policy<fused_min_teams<T, KSSIM_TUNE_FUSED_NORMALIZED_MIN_TEAMS>>(
        exec, k.league_size(), k.rows / K::col_rows, K::cols / K::col_chunk, K::Tile::scratch_level,
        K::scratch_bytes(k.rows, k.map_pass.window.size), opts, kernel, Kokkos::ParallelForTag{});
    launch("kssim::fused_normalized_forward", policy, kernel);
  });
}

}  // namespace kssim::impl
