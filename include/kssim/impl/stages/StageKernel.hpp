// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What every stage kernel (RowBlur, ColumnBlur, AdjointColumn, AdjointRow, and the masked row and column
// passes) shares: the names of its tile shape and its launch. The names are a macro, not a base class: the
// functors are aggregates built positionally (`RowBlur<...> k{x, y, ...}`), which a base would break, and they
// hold only their own pointers, extents and PODs (KernelArrays.hpp).

#include <kssim/Options.hpp>
#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/stages/AxisTile.hpp>

#include <Kokkos_Core.hpp>

// Team, Scratch (RowScratch or AxisScratch) and Tile (Tiles.hpp, the tile shape of this backend and type).
#define KSSIM_STAGE_TILES(ExecSpace, T, ScratchKind)                                   \
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;                    \
  using Scratch = typename ::kssim::impl::ScratchKind<ExecSpace, T>::Scratch;          \
  using Tile = ::kssim::impl::Tiles<ExecSpace, T>;                                     \
  static constexpr int scratch_level = Tile::scratch_level

// Row passes: a team owns tile_rows rows of tile_cols outputs, each lane a chunk of consecutive outputs.
#define KSSIM_ROW_STAGE_TILES(ExecSpace, T)     \
  KSSIM_STAGE_TILES(ExecSpace, T, RowScratch); \
  static constexpr int tile_rows = Tile::row_rows, tile_cols = Tile::row_cols, chunk = Tile::row_chunk

// Strided-axis passes (AxisTile.hpp): a team owns a tile along the axis, tile_inner elements across it, and
// each thread a block of rows x chunk outputs.
#define KSSIM_AXIS_STAGE_TILES(ExecSpace, T)     \
  KSSIM_STAGE_TILES(ExecSpace, T, AxisScratch); \
  static constexpr int tile_inner = Tile::axis_inner, chunk = Tile::axis_chunk, rows = Tile::axis_rows

namespace kssim::impl {

// Launches a stage functor's run<Taps>(team) (FixedTaps.hpp) on `league` teams, each a tile of `tile_rows`
// team threads by `tile_inner` lanes, with the scratch the functor asks for. MinTeams: make_team_policy.
template <int MinTeams = 1, class ExecSpace, class Kernel>
void launch_stage(const char* name, const ExecSpace& exec, const Options& opts, const Kernel& k, int league,
                  int tile_rows, int tile_inner) {
  with_fixed_taps<ExecSpace>(k.window.size, k, [&](const auto& kernel) {
    auto policy = make_team_policy<MinTeams>(exec, league, tile_rows, tile_inner, Kernel::scratch_level,
                                             k.scratch_bytes(), opts, kernel, Kokkos::ParallelForTag{});
    launch(name, policy, kernel);
  });
}

// The two loops of a row pass's tile: f(i, r) for each row r = row0 + i < nrows of the tile on the team's
// threads, and, inside a row, g(j0) for each chunk of outputs whose first column col0 + j0 < end on its lanes.
template <int TileRows, class Team, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_tile_row(const Team& team, int row0, int nrows, const F& f) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TileRows), [&](int i) {
    const int r = row0 + i;
    if (r < nrows) f(i, r);
  });
}

template <int TileCols, int Chunk, class Team, class G>
KOKKOS_FORCEINLINE_FUNCTION void for_each_output_chunk(const Team& team, int col0, int end, const G& g) {
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TileCols / Chunk), [&](int jc) {
    const int j0 = jc * Chunk;
    if (col0 + j0 < end) g(j0);
  });
}

}  // namespace kssim::impl
