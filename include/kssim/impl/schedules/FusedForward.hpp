// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The fused forward schedule for images (2D): the whole forward pass in one TeamPolicy kernel, tile by
// tile in team scratch. A team owns a chain of `chain` tiles of Rows x Cols map pixels down one column of
// tiles of one (n, c) slice (fused_forward_chain below) and, for each tile,
//   1. stages both images over its tile plus the window's halo, recentred (Recentring.hpp), as their sum
//      and difference (StagedPixels, LocalMoments.hpp);
//   2. runs the row blur over all Rows + window - 1 staged rows into four moment planes in scratch, in the
//      SumDifference form (row_moments, LocalMoments.hpp: the row-blur stage's arithmetic); after the
//      first tile of a chain, the window - 1 halo rows come from the previous tile (copied down in
//      scratch), so only Rows rows are staged and row-blurred;
//   3. runs the column blur of those planes (combine_axis_tile: the column-blur stage's arithmetic) and the
//      map formula (MapBlock.hpp), and writes only what leaves the tile: one partial sum of the map per
//      tile (TileItemSums, Reduction.hpp), the map's partial derivatives when gradients are wanted, the map
//      when asked;
//   and for the fused L1 + SSIM loss, one sum of |x - y| over the pixels the tile owns (L1Term.hpp).
// Volumes run it on every depth slice with the Statistics output (FusedSlices.hpp): step 3 then writes the
// column blur's four moment planes for the depth pass instead of the map.
// Bytes per map pixel (float, valid, DRAM): 8 in (halo re-reads hit the caches), 0 out for the mean alone,
// 12-16 out with the partial derivatives. The stage schedule moves the four row planes out and back in on
// top: 32 bytes more. The price is the row blur over the halo rows: (chain Rows + window - 1) / (chain Rows)
// of it.
// Images of a 16-bit storage type S are converted to the compute type T as they are staged (on GPUs four
// pixels per load, Packed16.hpp), the map is rounded to its type O as it is stored (Storage.hpp).

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/IndexDivisor.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/stages/L1Term.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/stages/LocalMoments.hpp>
#include <kssim/impl/stages/MapBlock.hpp>
#include <kssim/impl/core/Packed16.hpp>
#include <kssim/impl/stages/Reduction.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Tuning.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

namespace kssim::impl {

// Tile shapes of the fused schedules (forward and backward). GPU tiles are 32 x 32 pixels: the staged
// images and the four moment planes of a float tile with an 11-tap halo take 36 KiB, inside the 40 KiB of
// team scratch Kokkos' CUDA backend offers. Host tiles are larger (their scratch is ordinary cache-resident
// memory): 64 rows, so the halo rows add a sixth to the row blur instead of a third, and 128 columns, so
// that each row a thread reads from memory is a run long enough for the hardware prefetcher (2 CPU cores,
// 1x3x1080x1920 fwd+bwd, one thread's CPU time: 98-121 ms with 64 columns, 82-92 with 128 or 192, 81-86
// with 256, 96-106 with 512, whose 0.5 MB tiles leave the L2 cache; the forward alone the same with all).
// The host tile: KSSIM_TUNE_HOST_FUSED_ROWS / _COLS (Tuning.hpp).
template <class ExecSpace, class T>
struct FusedTiles {
  static constexpr bool gpu = gpu_code_paths_v<ExecSpace>;
  static constexpr int max_rows = gpu ? 32 : KSSIM_TUNE_HOST_FUSED_ROWS;  // halved while the scratch does not fit
  static constexpr int cols = gpu ? 32 : KSSIM_TUNE_HOST_FUSED_COLS;
  static constexpr int row_chunk = Tiles<ExecSpace, T>::row_chunk;  // outputs per lane along a row
  static constexpr int col_chunk = Tiles<ExecSpace, T>::axis_chunk;  // columns per lane in column passes
  static constexpr int col_rows = Tiles<ExecSpace, T>::axis_rows;    // rows per thread in column passes
  static constexpr int scratch_level = Tiles<ExecSpace, T>::scratch_level;
  static_assert(cols % row_chunk == 0 && cols % col_chunk == 0 && max_rows % col_rows == 0);
  using Scratch = typename RowScratch<ExecSpace, T>::Scratch;

  // Rows of staged planes padded to whole row chunks: what row_moments and the vector loads read.
  KOKKOS_INLINE_FUNCTION static int pitch(int count) { return RowScratch<ExecSpace, T>::pitch(count); }

  // The largest tile height (max_rows, halved) whose scratch fits the backend, or 0 if none does.
  template <class Bytes>
  static int fitting_rows(const ExecSpace& exec, const Bytes& bytes, int multiple = col_rows) {
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    const std::size_t max = std::size_t(Policy(exec, 1, 1).scratch_size_max(scratch_level));
    for (int rows = max_rows; rows >= multiple && rows % multiple == 0; rows /= 2)
      if (bytes(rows) <= max) return rows;
    return 0;
  }
};

// Teams per multiprocessor the fused kernels declare as a launch bound (Tiles.hpp, make_team_policy): it caps
// their registers per thread. 20 bytes of value per team: 5 float teams (51 registers per thread), 2 double
// teams; at 1x3x1080x1920 float the fwd+bwd took 334 us with 2 float teams, 270 with 4, 256 with 5 (the scratch
// of 5 tiles fits Hopper's 228 KiB of shared memory; both kernels issue at ~70% of the SM's peak, ncu;
// perf_tests/README.md, "Kernel variants"). Only the forward without partial derivatives takes it: the training
// kernels take 16 (below). KSSIM_TUNE_FUSED_MIN_TEAMS (Tuning.hpp).
// The kernels of a training step take 16 bytes: 4 float teams, 64 registers per thread. At 48 the forward with
// partial derivatives spilled (36/96 bytes of stores/loads, ptxas -v) and the backward held 24 accumulators at
// the limit; at 64 neither spills, and the steps' fwd+bwd took 0.5-5% less (both paddings of the five
// perf_tests shapes, perf_tests/README.md, "Kernel variants"), the forward without partials (MapOnly below,
// 8/24 bytes of spills at 48) unchanged. KSSIM_TUNE_FUSED_PARTIALS_MIN_TEAMS (the forward with partials, and
// every forward of a non-standard window or 16-bit images) and KSSIM_TUNE_FUSED_BACKWARD_MIN_TEAMS (Tuning.hpp).
template <class T, int Bytes = KSSIM_TUNE_FUSED_MIN_TEAMS>
inline constexpr int fused_min_teams = Bytes / sizeof(T) > 1 ? int(Bytes / sizeof(T)) : 1;

// Weighted: the map pixels weighted by map_weights at their window's centre (masked SSIM's MaskMode::Weights):
// the partials are those of w * map, tile_sums get the sums of w * map and sums.weights.tile_sums those of w.
template <class ExecSpace, class T, class Term = SsimTerm, class S = T, class O = T, bool Weighted = false>
struct FusedForward {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Tile = FusedTiles<ExecSpace, T>;
  using Scratch = typename Tile::Scratch;
  static constexpr int cols = Tile::cols, row_chunk = Tile::row_chunk, col_chunk = Tile::col_chunk;
  // Outputs per thread along a column in the column pass: each staged row is read and centred once for all
  // of them (KSSIM_TUNE_FUSED_FORWARD_COL_ROWS, Tuning.hpp: float GPU tiles).
  static constexpr int col_rows = Tile::gpu && sizeof(T) == 4 ? KSSIM_TUNE_FUSED_FORWARD_COL_ROWS : Tile::col_rows;
  static_assert(Tile::max_rows % col_rows == 0);
  // KSSIM_TUNE_FUSED_WEIGHTS_STAGED (Tuning.hpp): the weighted forward of GPUs stages each tile's map weights in
  // scratch, with their sums, while it stages the images; the column pass then reads them from scratch and no
  // longer sums them. StagedWeightScratch: where (below).
  static constexpr bool staged_weights = Weighted && Tile::gpu && KSSIM_TUNE_FUSED_WEIGHTS_STAGED != 0;
  struct StagedWeightScratch;

  // Only pointers, extents and PODs (KernelArrays.hpp).
  InputArray<S> x, y;
  OutputArray<O> map;       // optional (null data to skip)
  PlaneArray<T> partials;   // optional: (K, NC * Ho * row_pitch), PartialPlanes order
  PartialPlanes wanted;
  // tile_sums (and l1.tile_sums, or Weighted: weights.tile_sums, those of the map weights) get one partial sum per
  // tile, slice by slice
  MapSums sums;
  // Weighted: (N, C, 1, H, W) of the images' extents and type, channels possibly broadcast
  InputArray<S> map_weights;
  // (NC, 2), Recentring.hpp, from compute_shifts' kernel. Sampling in each team instead, to save that launch,
  // made every team wait at a barrier for the samples' global loads (23% of the kernel's warp-stall samples, the
  // forward 109 instead of ~90 us at 1x3x1080x1920, ncu), one-wave problems slower too (64x1x128x128 forward
  // 32.5-33.7 us against 27.6-29.0), and the unused code alone cost the large shapes 0.5-2% (spills, ptxas -v;
  // perf_tests/README.md, "Tried and rejected").
  const T* shifts = nullptr;
  GaussianWindow<T> window;
  Geometry g;
  T c1 = 0, c2 = 0;
  int rows = 0;              // map rows per tile (FusedTiles::fitting_rows)
  int chain = 1;             // vertically adjacent tiles per team (fused_forward_chain)
  int tiles_x = 0, tiles_y = 0;
  // The league rank's divisors: teams per slice and tiles_x (IndexDivisor.hpp; set by fused_forward).
  IndexDivisor per_image, per_row;
  std::ptrdiff_t x_rows = -1, y_rows = -1;  // nested_row_stride of x and y
  // The team that finishes last adds the tile sums into the slice sums and the mean (finish_sums), instead
  // of a sum_map launch after the kernel (fused_forward_finishes).
  bool finish = false;
  // Volumes (the slice-fused schedule, FusedSlices.hpp): every depth slice is a 2D image of g.h x g.w, slice
  // s = nc * g.d + z; run<Taps, false, true> writes the four moment planes after the row and column passes
  // (Standard form, (NC * D, Ho, Wo)) for the depth pass instead of the map. slice_depth divides by g.d
  // (the slice's (n, c) for its recentring shifts).
  PlaneArray<T> statistics;
  IndexDivisor slice_depth;

  static std::size_t scratch_bytes(int rows, int window) {
    const int halo = rows + window - 1;
    if constexpr (staged_weights)
      return RowScratch<ExecSpace, T>::bytes(2, halo, cols + window - 1) +
             RowScratch<ExecSpace, T>::bytes(moment_planes, halo, cols) + StagedWeightScratch::bytes();
    return RowScratch<ExecSpace, T>::bytes(2, halo, cols + window - 1) +
           RowScratch<ExecSpace, T>::bytes(moment_planes, halo, cols) +
           (Weighted ? 2 : 1) * TileItemSums::bytes(rows / col_rows * (cols / col_chunk));
  }
  std::size_t scratch_size() const { return scratch_bytes(rows, window.size); }
  // GPUs: the fused loss's L1 sum is added as the images are staged (OwnedPixels), each thread's share in a
  // register over the team's chain of tiles, summed once per chain in the moment planes' scratch after the last
  // tile (gather_l1_shares): no loads and no scratch of its own. Against a sum per tile from the pixels loaded
  // again, the loss's forward took 0.89-0.93x the time (H100, perf_tests/README.md, "Fused L1 + SSIM loss").
  // Only the fused loss's kernels (run's L1; fused_forward) hold its code. The weighted forward has none: the L1
  // term takes no map weights (Plan). vector_lanes: the launch's vector length (team_vector_length), which with
  // the team's size says how many shares there are.
  static constexpr bool l1_items = Tile::gpu && !Weighted;
  int vector_lanes = 1;
  // Teams per 2D slice (an (n, c) image, or a depth slice of a volume): one per column of tiles and chain of
  // `chain` tiles down it.
  static int teams_per_image(const Geometry& g, int rows, int chain) {
    return ceil_div(g.ow, cols) * ceil_div(ceil_div(g.oh, rows), chain);
  }
  int league_size() const { return g.images() * g.d * teams_per_image(g, rows, chain); }
  // Tiles per (n, c) slice: each leaves one map sum (MapSums::tile_sums).
  static int tiles_per_image(const Geometry& g, int rows) { return ceil_div(g.ow, cols) * ceil_div(g.oh, rows); }

  // Partials = false: the partial-derivative stores compiled out (MapOnly below). Statistics = true: the
  // moment planes out instead of the map (volumes, SliceStatistics in FusedSlices.hpp); `nc` is then a depth
  // slice. L1 = true: a GPU kernel of the fused loss (l1_items; hosts test sums.l1 at run time).
  template <int Taps, bool Partials = true, bool Statistics = false, bool L1 = false>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const int rank = team.league_rank(), nc = per_image.quotient(rank), in_image = rank - nc * int(per_image.divisor);
    const int chain_row = per_row.quotient(in_image), tile_x = in_image - chain_row * tiles_x;
    const int first_tile = chain_row * chain, ox0 = tile_x * cols;
    const int image = Statistics ? slice_depth.quotient(nc) : nc;
    const T s1 = shifts[2 * image], s2 = shifts[2 * image + 1];
    const int halo = tap_count<Taps>(window) - 1, halo_rows = rows + halo;
    const Scratch images = RowScratch<ExecSpace, T>::allocate(team, 2, halo_rows, cols + halo);
    const Scratch moments = RowScratch<ExecSpace, T>::allocate(team, moment_planes, halo_rows, cols);

    // The team's tiles, top to bottom. Moment row i of a tile is input row oy0 - pad_h + i, so the next
    // tile's rows 0 .. halo - 1 are this tile's rows `rows` .. rows + halo - 1: they are carried over
    // (copied down in scratch) instead of staged and row-blurred again, and a chain of c tiles does the
    // row blur of its halo rows once instead of c times (fused_forward_chain needs rows >= halo).
    // Each tile leaves its own map sum (and L1 sum) in tile_sums, so the mean does not depend on the chain;
    // a tile's sum is finished during the next tile's staging and row blur (TileItemSums).
    constexpr int col_lanes = cols / col_chunk;
    [[maybe_unused]] StagedWeightScratch staged{};
    if constexpr (staged_weights)
      staged = StagedWeightScratch::allocate(team, items_per_tile(), map_weights, nc / g.c, nc % g.c);
    const TileItemSums item_sums =
        staged_weights ? staged.item_sums : TileItemSums::allocate(team, Tile::scratch_level, items_per_tile());
    [[maybe_unused]] const TileItemSums weight_items =
        staged_weights ? staged.weight_items
        : Weighted     ? TileItemSums::allocate(team, Tile::scratch_level, items_per_tile())
                       : TileItemSums{};
    static_assert(!L1 || l1_items, "L1 kernels: GPUs only, no map weights");
    const std::size_t first_sum = std::size_t(nc) * tiles_x * tiles_y + std::size_t(first_tile) * tiles_x + tile_x;
    // L1: the pixels whose |x - y| this team adds (its chain's rows, its tile column's columns), and this
    // thread's share of their sum.
    [[maybe_unused]] const OwnedPixels owned =
        L1 ? OwnedPixels{first_tile * rows, owned_end(first_tile * rows, chain * rows, g.oh, g.h), ox0,
                         owned_end(ox0, cols, g.ow, g.w)}
           : OwnedPixels{};
    [[maybe_unused]] double l1_share = 0;
    int k = 0;
    for (; k < chain; ++k) {
      const int oy0 = (first_tile + k) * rows;
      if (oy0 >= g.oh) break;  // the same for the whole team
      const int fresh = k == 0 ? 0 : halo;  // the first row this tile stages and row-blurs
      if (k > 0) carry_halo_rows<ExecSpace, T, moment_planes, cols>(team, moments, rows, halo);
      stage_images<Taps, L1>(team, images, nc, oy0 - g.pad_h, ox0 - g.pad_w, s1, s2, fresh, owned, l1_share);
      if constexpr (Weighted && !Tile::gpu) prefetch_map_weights(team, nc, oy0, ox0);
      if constexpr (staged_weights && !Statistics) {
        if (k > 0)  // tile k - 1's weight sum (its group sums were taken in its row-blur step)
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            sums.weights.tile_sums[first_sum + std::size_t(k - 1) * tiles_x] = weight_items.total();
          });
        stage_map_weights(team, staged, oy0, ox0);
      }
      if (!Statistics && k > 0) {  // of tile k - 1
        item_sums.sum_groups(team);
        if constexpr (Weighted && !staged_weights) weight_items.sum_groups(team);
      }
      if constexpr (!Tile::gpu && !Weighted) {
        if (sums.l1.tile_sums) {
          const double l1 = l1_sum_of_tile(team, nc, oy0, ox0);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { sums.l1.tile_sums[first_sum + std::size_t(k) * tiles_x] = l1; });
        }
      }
      team.team_barrier();

      // Row blur of the staged rows into the moment planes.
      constexpr int row_lanes = cols / row_chunk;
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, (halo_rows - fresh) * row_lanes), [&](int e) {
        const int i = fresh + e / row_lanes, j0 = e % row_lanes * row_chunk;
        T m[moment_planes][row_chunk];
        row_moments<row_chunk, Taps, Tile::gpu && (Taps > 0), MomentForm::SumDifference, StagedPixels::SumDifference>(
            &images(0, i, j0), &images(1, i, j0), window, m);
        for (int p = 0; p < moment_planes; ++p) {
          T* dst = &moments(p, i, j0);
          if constexpr (Tile::gpu && row_chunk % 4 == 0)
            store_quads(dst, m[p]);  // rows of whole, aligned chunks (RowScratch)
          else
            store_chunk<row_chunk>(dst, m[p], row_chunk);
        }
      });
      if constexpr (staged_weights && !Statistics) weight_items.sum_groups(team);  // of this tile: staged above
      if (!Statistics && k > 0)
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          sums.tile_sums[first_sum + std::size_t(k - 1) * tiles_x] = item_sums.total();
          if constexpr (Weighted && !staged_weights)
            sums.weights.tile_sums[first_sum + std::size_t(k - 1) * tiles_x] = weight_items.total();
        });
      team.team_barrier();

      // Column blur, one block of col_rows x col_chunk outputs per thread and lane, then the map (ColumnBlur's map
      // pass: each block's sum goes to its slot of item_sums) or, for volumes, the block's moments out.
      // store_map is read once: tested inside the store, the map's pointer was reloaded and compared for every
      // row of every block.
      [[maybe_unused]] const bool store_map = map.data() != nullptr;
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, rows / col_rows * col_lanes), [&](int e) {
        const int j0 = e / col_lanes * col_rows, i0 = e % col_lanes * col_chunk;
        const int oy = oy0 + j0, ox = ox0 + i0;
        [[maybe_unused]] double sum = 0, weight_sum = 0;
        if (oy < g.oh && ox < g.ow) {
          const int nu = ox + col_chunk <= g.ow ? col_chunk : g.ow - ox;
          const auto weight = [&] {  // KSSIM_TUNE_FUSED_WEIGHTS_EARLY (Tuning.hpp): loaded before the blur
            if constexpr (staged_weights)
              return StagedWeights<T>{&staged.weights[j0 * cols + i0], cols};
            else if constexpr (Weighted && !Statistics && KSSIM_TUNE_FUSED_WEIGHTS_EARLY != 0)
              return LoadedWeights<T, col_rows, col_chunk>(map_weight(nc, oy, ox), g.oh - oy, nu);
            else
              return map_weight(nc, oy, ox);
          }();
          T acc[moment_planes][col_rows][col_chunk];
          combine_axis_tile<col_rows, col_chunk, Taps, MomentForm::SumDifference>(moments, window, j0, i0, acc);
          if constexpr (Statistics) {
            store_statistics(acc, nc, oy, ox);
          } else {
            sum = evaluate_map_block<col_rows, col_chunk, Term>(
                acc, g.oh - oy, nu, s1, s2, c1, c2, window, Partials ? wanted : PartialPlanes{}, partials,
                [&](int q) { return (std::size_t(nc) * g.oh + oy + q) * g.row_pitch + ox; },
                [&](int q, const T(&value)[col_chunk]) {
                  if (!store_map) return;
                  for (int u = 0; u < col_chunk; ++u)
                    if (u < nu) map(nc / g.c, nc % g.c, 0, oy + q, ox + u) = to_storage<O>(value[u]);
                },
                weight, &weight_sum);
          }
        }
        if constexpr (!Statistics) item_sums.items[e] = sum;
        if constexpr (!Statistics && Weighted && !staged_weights) weight_items.items[e] = weight_sum;
      });
      team.team_barrier();  // the next tile overwrites the planes this one read; its item sums are complete
    }
    // L1: the chain's sum, in its first tile's slot, and 0 in its other tiles' (sum_map adds every slot).
    [[maybe_unused]] TileItemSums l1_shares{};
    if constexpr (L1) l1_shares = gather_l1_shares(team, moments, l1_share);
    const auto write_l1 = [&]() {
      if constexpr (L1) {
        sums.l1.tile_sums[first_sum] = l1_shares.total();
        for (int t = 1; t < k; ++t) sums.l1.tile_sums[first_sum + std::size_t(t) * tiles_x] = 0;
      }
    };
    if constexpr (Statistics) {
      if constexpr (L1) {
        team.team_barrier();
        l1_shares.sum_groups(team);
        team.team_barrier();
        Kokkos::single(Kokkos::PerTeam(team), write_l1);
      }
      return;
    }
    // The last tile's sum; with `finish`, the team counts itself done (the sum is visible first).
    item_sums.sum_groups(team);
    if constexpr (Weighted && !staged_weights) weight_items.sum_groups(team);  // staged: already summed
    team.team_barrier();
    if constexpr (L1) {
      l1_shares.sum_groups(team);
      team.team_barrier();
    }
    bool last = false;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](bool& last_team) {
          sums.tile_sums[first_sum + std::size_t(k - 1) * tiles_x] = item_sums.total();
          write_l1();
          if (rank == 0) sums.invalidate_results();  // until sum_map (or finish_sums) writes them (Reduction.hpp)
          if constexpr (Weighted) sums.weights.tile_sums[first_sum + std::size_t(k - 1) * tiles_x] = weight_items.total();
          last_team = finish && count_team_done(sums, team.league_size());
        },
        last);
    if (last) finish_sums(team, moments);
  }

  // The mean by the team that finished last: every slice's tile sums in OrderedSum's order (the same bits as
  // sum_map's), batched over slices, in the moment planes' scratch (no longer needed), then the total.
  KOKKOS_INLINE_FUNCTION void finish_sums(const Team& team, const Scratch& moments) const {
    const int per = slice_scratch_doubles(sums);
    const int capacity = int(finish_capacity(rows, window.size));
    const int batch = Kokkos::max(1, capacity / per);  // fused_forward_finishes: capacity >= per
    auto* scratch = reinterpret_cast<double*>(moments.data());
    team.team_barrier();  // every thread is done with the moment planes
    for (int first = 0; first < g.images(); first += batch) {
      sum_slices(team, sums, first, Kokkos::min(batch, g.images() - first), scratch);
      team.team_barrier();
    }
    finish_mean(team, sums, scratch, capacity);
  }

  // L1 staged, after the chain's last tile: every thread's share in the moment planes' scratch (free by then), as
  // the items of a TileItemSums, one per thread and lane of the team (TeamVectorRange gives each its own index;
  // a thread given several would give its share once). The shares, and so the sum's rounding, follow the team's
  // shape, which a backend and the options fix: the same inputs give the same bits.
  KOKKOS_INLINE_FUNCTION TileItemSums gather_l1_shares(const Team& team, const Scratch& moments, double share) const {
    const int n = team.team_size() * vector_lanes;
    auto* p = reinterpret_cast<double*>(moments.data());
    const TileItemSums shares{p, p + n, n};
    bool first = true;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, n), [&](int e) {
      shares.items[e] = first ? share : 0.0;
      first = false;
    });
    return shares;
  }

  // Doubles that finish_sums' scratch (the moment planes of a tile of `rows`) holds.
  KOKKOS_INLINE_FUNCTION static long long finish_capacity(int rows, int window) {
    return (long long)(moment_planes) * (rows + window - 1) * RowScratch<ExecSpace, T>::pitch(cols) * sizeof(T) /
           sizeof(double);
  }

  // The map weights of the block at map row oy, column ox of slice nc (Weighted; else Unweighted): the mask
  // at each output's window centre, which is input pixel (oy + window / 2 - pad_h, ox + window / 2 - pad_w).
  KOKKOS_INLINE_FUNCTION auto map_weight(int nc, int oy, int ox) const {
    if constexpr (Weighted) {
      return MaskAtCentre<T, S>{map_weights, nc / g.c, nc % g.c, oy + window.size / 2 - g.pad_h,
                             ox + window.size / 2 - g.pad_w};
    } else {
      return Unweighted{};
    }
  }

  // Hosts: the map weights of the tile at map row oy0, column ox0 requested while the row blur runs. The column
  // pass reads them in runs of a block's width, rows apart, and without this they missed the caches: the
  // weighted forward took 1.7x SSIM's time instead of 1.1x (1x3x1080x1920 float, 2 cores, a mask per image).
  KOKKOS_INLINE_FUNCTION void prefetch_map_weights(const Team& team, int nc, int oy0, int ox0) const {
    if (map_weights.stride(4) != 1) return;
    const int h0 = oy0 + window.size / 2 - g.pad_h, w0 = ox0 + window.size / 2 - g.pad_w;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Kokkos::min(rows, g.oh - oy0)), [&](int q) {
      prefetch_row_segment(&map_weights(nc / g.c, nc % g.c, 0, h0 + q, 0), w0, cols, g.w);
    });
  }

  // KSSIM_TUNE_FUSED_WEIGHTS_STAGED: the weighted forward's scratch besides the images and moment planes. Without
  // it the column pass loaded each block's weights from the mask and summed them, and the 7- and 11-tap kernels
  // spilled 28 / 76 bytes (stores / loads) at their 64 registers (perf_tests/ptxas/spills.sh; SSIM's forward, 0):
  // the mask's address for the team's (n, c) and the weights' scratch pointers lived through the whole tile loop,
  // the weights and their sums through the column blur (bisected with ptxas -v: each of those alone still spilled).
  // Here both item-sum sets lie one block apart (constant offsets from one pointer); on CUDA the tile's weights and
  // the mask's address are static shared memory (immediate addresses, no register through the loop); the address
  // is written once per team and read back from scratch where a tile's weights are staged.
  struct StagedWeightScratch {
    static constexpr int max_items = Tile::max_rows / col_rows * (cols / col_chunk);
    static constexpr int item_block = max_items + (max_items + TileItemSums::group - 1) / TileItemSums::group;
    static constexpr int tile_weights = Tile::max_rows * cols;
#if defined(KOKKOS_ENABLE_CUDA)
    static constexpr bool static_shared = std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
    static constexpr bool static_shared = false;
#endif
    TileItemSums item_sums, weight_items;  // the map's and the weights' item sums
    T* weights = nullptr;                  // Tile::max_rows x cols, 0 outside the map
    const S** mask = nullptr;              // &map_weights(n, c, 0, 0, 0) of the team's slice

    static std::size_t bytes() {
      return sizeof(double) * (2 * item_block + 1) +
             (static_shared ? 0 : sizeof(T) * tile_weights + 16 + 2 * sizeof(const S*));
    }
    // With every thread of the team: ends with a barrier (mask is set).
    KOKKOS_INLINE_FUNCTION static StagedWeightScratch allocate(const Team& team, int count,
                                                               const InputArray<S>& map_weights, int n, int c) {
      StagedWeightScratch s;
      auto& space = team.team_scratch(int(Tile::scratch_level));
      auto* p = static_cast<double*>(
          space.get_shmem_aligned(sizeof(double) * 2 * item_block, std::ptrdiff_t(sizeof(double))));
      s.item_sums = TileItemSums{p, p + max_items, count};
      s.weight_items = TileItemSums{p + item_block, p + item_block + max_items, count};
#if defined(__CUDA_ARCH__)
      __shared__ T tile[tile_weights];
      __shared__ const S* mask_base;
      s.weights = tile;
      s.mask = &mask_base;
#else
      s.weights = static_cast<T*>(space.get_shmem_aligned(sizeof(T) * tile_weights, std::ptrdiff_t(16)));
      s.mask = static_cast<const S**>(space.get_shmem_aligned(sizeof(const S*), std::ptrdiff_t(sizeof(const S*))));
#endif
      Kokkos::single(Kokkos::PerTeam(team), [&]() { *s.mask = &map_weights(n, c, 0, 0, 0); });
      team.team_barrier();
      return s;
    }
  };

  // KSSIM_TUNE_FUSED_WEIGHTS_STAGED: the map weights of the tile at map row oy0, column ox0 into staged.weights,
  // each column-pass block's sum into staged.weight_items (the same values, in the same order, as the column pass
  // summed them), one block per work item as the column pass has them (coalesced loads, no bank conflicts).
  KOKKOS_INLINE_FUNCTION void stage_map_weights(const Team& team, const StagedWeightScratch& staged, int oy0,
                                                int ox0) const {
    constexpr int col_lanes = cols / col_chunk;
    const int h0 = oy0 + window.size / 2 - g.pad_h, w0 = ox0 + window.size / 2 - g.pad_w;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, items_per_tile()), [&](int e) {
      const int j0 = e / col_lanes * col_rows, i0 = e % col_lanes * col_chunk;
      const S* const mask = *staged.mask;
      const std::ptrdiff_t rs = map_weights.stride(3), cs = map_weights.stride(4);
      double sum = 0;
      for (int q = 0; q < col_rows; ++q)
        for (int u = 0; u < col_chunk; ++u) {
          const bool inside = oy0 + j0 + q < g.oh && ox0 + i0 + u < g.ow;
          const T w = inside ? to_compute<T>(mask[(h0 + j0 + q) * rs + (w0 + i0 + u) * cs]) : T(0);
          staged.weights[(j0 + q) * cols + i0 + u] = w;
          sum += double(w);
        }
      staged.weight_items.items[e] = sum;
    });
  }

  // Work items of the column pass per tile: its map blocks.
  KOKKOS_INLINE_FUNCTION int items_per_tile() const { return rows / col_rows * (cols / col_chunk); }

  // The moments of a block of outputs from map row oy, column ox of depth slice nc into the statistics planes
  // ((NC * D, Ho, Wo), unpadded: the depth pass reads whole (Ho, Wo) planes), the rows and columns inside the map.
  KOKKOS_INLINE_FUNCTION void store_statistics(const T (&acc)[moment_planes][col_rows][col_chunk], int nc, int oy,
                                               int ox) const {
    const int nu = ox + col_chunk <= g.ow ? col_chunk : g.ow - ox;
    for (int q = 0; q < col_rows; ++q) {
      if (oy + q >= g.oh) break;
      const std::size_t at = (std::size_t(nc) * g.oh + oy + q) * g.ow + ox;
      for (int p = 0; p < moment_planes; ++p)
        for (int u = 0; u < col_chunk; ++u)
          if (u < nu) statistics(p, at + u) = acc[p][q][u];
    }
  }

  // Hosts: the sum of |x - y| over the input pixels a tile owns (owned_end), raw, just after staging read them
  // (the same value in every thread of the team), row by row: no index arithmetic per pixel (it cost half of
  // SSIM's forward time on 2 host cores).
  KOKKOS_INLINE_FUNCTION double l1_sum_of_tile(const Team& team, int nc, int oy0, int ox0) const {
    const int owned_rows = owned_end(oy0, rows, g.oh, g.h) - oy0, owned_cols = owned_end(ox0, cols, g.ow, g.w) - ox0;
    const std::ptrdiff_t xs = x.stride(4), ys = y.stride(4);
    double l1 = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, owned_rows),
        [&](int i, double& acc) {
          const int r = nc * g.h + oy0 + i;
          acc += l1_row_sum<T>(row_pointer(x, x_rows, r) + ox0 * xs, xs, row_pointer(y, y_rows, r) + ox0 * ys, ys,
                            owned_cols);
        },
        l1);
    return l1;
  }

  // Whether input rows iy0 + fresh .. iy0 + halo_rows - 1, columns ix0 .. ix0 + pitch - 1 of every slice lie
  // inside the image, with unit column strides and offsets from row iy0 that fit 32 bits (64-bit index
  // arithmetic cost ~10 instructions per quad): the tiles that stage from one base pointer per team.
  KOKKOS_INLINE_FUNCTION bool rows_inside(int iy0, int ix0, int fresh, int halo_rows, int pitch) const {
    constexpr std::ptrdiff_t max_offset = 0x7fffffff;
    return x.stride(4) == 1 && y.stride(4) == 1 && x_rows >= 0 && y_rows >= 0 && iy0 + fresh >= 0 &&
           iy0 + halo_rows <= g.h && ix0 >= 0 && ix0 + pitch <= g.w &&
           halo_rows * Kokkos::max(x_rows, y_rows) <= max_offset;
  }

  // Four staged pixels a = x', b = y' as their sum and difference (StagedPixels::SumDifference, LocalMoments.hpp).
  KOKKOS_FORCEINLINE_FUNCTION static void store_sum_difference(const Scratch& images, int i, int j, const T (&a)[4],
                                                               const T (&b)[4]) {
    T u[4], w[4];
    for (int k = 0; k < 4; ++k) {
      u[k] = a[k] + b[k];
      w[k] = a[k] - b[k];
    }
    store_quads(&images(0, i, j), u);
    store_quads(&images(1, i, j), w);
  }

  // images(0 / 1, i, j) = x' + y' / x' - y' for the recentred x' = x - s1, y' = y - s2 at input row iy0 + i,
  // column ix0 + j of slice nc (StagedPixels::SumDifference), for the rows i >= fresh; outside the image the
  // zero padding, i.e. x' = -s1, y' = -s2 (Reflect, Replicate: the pixel Geometry::source maps it to). Every element of the padded rows is defined (vector loads read them).
  // With a compile-time tap count the row pitch is a constant too: the flat index's division by it is then a
  // multiply and a shift instead of a ~20-instruction integer division per staged pixel.
  // L1 (GPUs): |x - y| of the `owned` pixels staged is added to l1_share, from the values as loaded.
  template <int Taps, bool L1 = false>
  KOKKOS_INLINE_FUNCTION void stage_images(const Team& team, const Scratch& images, int nc, int iy0, int ix0, T s1,
                                           T s2, int fresh, [[maybe_unused]] const OwnedPixels& owned,
                                           [[maybe_unused]] double& l1_share) const {
    static_assert(!L1 || Tile::gpu);
    constexpr int fixed_pitch = Taps > 0 ? RowScratch<ExecSpace, T>::pitch(cols + Taps - 1) : 0;
    const int halo_rows = int(images.extent(1)), pitch = fixed_pitch > 0 ? fixed_pitch : int(images.extent(2));
    const std::ptrdiff_t xs = x.stride(4), ys = y.stride(4);
    if constexpr (Tile::gpu && row_chunk % 4 == 0) {
      // Four consecutive pixels per lane: the row's address arithmetic once for four pixels, their loads
      // issued together (16-bit images: packed loads, Packed16.hpp), and two 128-bit scratch stores (the
      // rows hold whole, aligned chunks). An element loop cost ~60 instructions per staged pixel (sm_90 SASS,
      // 11 taps: 64-bit addressing, bounds, scalar stores), a fifth of the forward's; this one ~15.
      constexpr int fixed_quads = fixed_pitch / 4;
      const int quads = fixed_quads > 0 ? fixed_quads : pitch / 4;
      // Tiles whose staged rows lie wholly inside the image (most of them): one base pointer per team, no
      // bounds or stride tests per quad. The general loop below cost 88 instructions per quad (sm_90, ncu's
      // SASS counts of 1x3x1080x1920): a third of them row pointers and edge tests that these tiles never need.
      if constexpr (sizeof(S) >= 4) {
        if (rows_inside(iy0, ix0, fresh, halo_rows, pitch)) {
          const S* xb = x.data() + std::ptrdiff_t(nc * g.h + iy0) * x_rows + ix0;
          const S* yb = y.data() + std::ptrdiff_t(nc * g.h + iy0) * y_rows + ix0;
          const int xr = int(x_rows), yr = int(y_rows);
          Kokkos::parallel_for(Kokkos::TeamVectorRange(team, (halo_rows - fresh) * quads), [&](int e) {
            const int i = fresh + e / quads, j = e % quads * 4;
            const S* xp = xb + (i * xr + j);
            const S* yp = yb + (i * yr + j);
            T a[4], b[4];
            for (int u = 0; u < 4; ++u) {
              a[u] = to_compute<T>(xp[u]);
              b[u] = to_compute<T>(yp[u]);
            }
            if constexpr (L1) owned.add(iy0 + i, ix0 + j, a, b, l1_share);
            for (int u = 0; u < 4; ++u) {
              a[u] -= s1;
              b[u] -= s2;
            }
            store_sum_difference(images, i, j, a, b);
          });
          return;
        }
      }
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, (halo_rows - fresh) * quads), [&](int e) {
        const int i = fresh + e / quads, j = e % quads * 4, iy = g.source(iy0 + i, g.h), ix = ix0 + j;
        const bool row_inside = iy >= 0;  // a row of the image, or the one the padding reads
        const S* xr = row_inside ? row_pointer(x, x_rows, nc * g.h + iy) : nullptr;
        const S* yr = row_inside ? row_pointer(y, y_rows, nc * g.h + iy) : nullptr;
        const int xo = row_inside ? quad_offset(xr, xs, ix, g.w) : -1;
        const int yo = row_inside ? quad_offset(yr, ys, ix, g.w) : -1;
        T a[4], b[4];  // as loaded (0 for the zero padding), then recentred
        if (xo >= 0 && yo >= 0) {  // inside, contiguous
          load_quad(xr, ix, xo, a);
          load_quad(yr, ix, yo, b);
        } else {  // the image's edges, strided rows
          for (int u = 0; u < 4; ++u) {
            const int col = row_inside ? g.source(ix + u, g.w) : -1;
            a[u] = col >= 0 ? to_compute<T>(xr[col * xs]) : T(0);
            b[u] = col >= 0 ? to_compute<T>(yr[col * ys]) : T(0);
          }
        }
        if constexpr (L1) owned.add(iy0 + i, ix, a, b, l1_share);
        for (int u = 0; u < 4; ++u) {
          a[u] -= s1;
          b[u] -= s2;
        }
        store_sum_difference(images, i, j, a, b);
      });
    } else if constexpr (Tile::gpu) {
      // One flat range over all threads and lanes: consecutive lanes load consecutive pixels (coalesced).
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, (halo_rows - fresh) * pitch), [&](int e) {
        const int i = fresh + e / pitch, j = e % pitch, iy = g.source(iy0 + i, g.h), ix = g.source(ix0 + j, g.w);
        T a = -s1, b = -s2;
        if (iy >= 0 && ix >= 0) {
          const int r = nc * g.h + iy;
          const T xv = to_compute<T>(row_pointer(x, x_rows, r)[ix * xs]);
          const T yv = to_compute<T>(row_pointer(y, y_rows, r)[ix * ys]);
          if constexpr (L1) owned.add(iy0 + i, ix0 + j, xv, yv, l1_share);
          a += xv;
          b += yv;
        }
        images(0, i, j) = a + b;
        images(1, i, j) = a - b;
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, fresh, halo_rows), [&](int i) {
        const int iy = g.source(iy0 + i, g.h), ahead = iy0 + i + staging_prefetch_rows;
        if (i + staging_prefetch_rows < halo_rows && unsigned(ahead) < unsigned(g.h) && xs == 1 && ys == 1) {
          prefetch_row_segment(row_pointer(x, x_rows, nc * g.h + ahead), ix0, pitch, g.w);
          prefetch_row_segment(row_pointer(y, y_rows, nc * g.h + ahead), ix0, pitch, g.w);
        }
        T* const u = &images(0, i, 0);
        T* const w = &images(1, i, 0);
        if (iy >= 0) {  // a row of the image, or the one the padding reads
          const int r = nc * g.h + iy;
          stage_row_segment(u, row_pointer(x, x_rows, r), std::size_t(xs), ix0, pitch, g.w, s1, -s1, g.padding);
          stage_row_segment(w, row_pointer(y, y_rows, r), std::size_t(ys), ix0, pitch, g.w, s2, -s2, g.padding);
        } else {
          for (int j = 0; j < pitch; ++j) {
            u[j] = -s1;
            w[j] = -s2;
          }
        }
        KSSIM_VECTORIZE
        for (int j = 0; j < pitch; ++j) {  // the row, still in cache, into its sum and difference
          const T a = u[j], b = w[j];
          u[j] = a + b;
          w[j] = a - b;
        }
      });
    }
  }
};

// The tile height the fused forward schedule uses for this window on this backend (0: it does not fit).
// KSSIM_TUNE_FUSED_FORWARD_ROWS=n in the environment (Tuning.hpp): n rows instead where n is a multiple of the
// column pass's rows per thread and no taller than what fits (GPU teams of n / col_rows x 32 threads), for
// tuning runs only (small problems: more, smaller teams).
template <class ExecSpace, class T>
int fused_forward_rows(const ExecSpace& exec, int window) {
  using K = FusedForward<ExecSpace, T>;
  const int fit = FusedTiles<ExecSpace, T>::fitting_rows(
      exec, [&](int rows) { return K::scratch_bytes(rows, window); }, K::col_rows);
  const int forced = tuning::forced_forward_rows();
  return forced > 0 && forced % K::col_rows == 0 && forced <= fit ? forced : fit;
}

// Teams of the fused forward that a GPU runs at once: its multiprocessors times the teams the kernel's launch
// bound holds on each (fused_min_teams: the registers allow no more; 660 for float on 132 of them). 0 where
// the backend does not say (the callers then use its threads / 256). The forward without partials' bound: the
// chains and the last-team finish of the forward with partials (4 teams per multiprocessor) follow the same
// choices, as in the measurement that set its bound.
// Bytes: the launch bound's (fused_min_teams) of another fused kernel.
template <class ExecSpace, class T, int Bytes = KSSIM_TUNE_FUSED_MIN_TEAMS>
long long fused_resident_teams([[maybe_unused]] const ExecSpace& exec) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>)
    return 1LL * exec.cuda_device_prop().multiProcessorCount * fused_min_teams<T, Bytes>;
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>)
    return 1LL * Kokkos::HIP::hip_device_prop().multiProcessorCount * fused_min_teams<T, Bytes>;
#endif
  return 0;
}

// Tiles per team down a column of tiles (FusedForward::chain), two regimes (from a sweep of every chain 1-8,
// perf_tests/README.md, "Schedules and the router"):
//  - large problems: the longest chain that still leaves two teams for every team the GPU holds by threads
//    (hosts: for every thread), so that the launch keeps every multiprocessor or core busy;
//  - small problems, where even single-tile teams fill fewer than two waves of the GPU's resident teams
//    (64x1x128x128: 1024 teams, 660 resident on 132 multiprocessors): teams run in whole waves, so the chain
//    with the fewest rounds x tiles per team x row-blur work per tile wins (there: 2 tiles per team, one wave,
//    2-4% faster than 1 tile in two waves; 3 tiles would leave 3 + 1 and take 12% longer).
// Chains are up to 8 tiles long, or 256 rows for tiles shorter than 32 rows (KSSIM_TUNE_FUSED_FORWARD_ROWS),
// whose teams are smaller: the GPU's slots count teams of their size. Tiles shorter than the window's halo
// (double's 8-row GPU tiles) get none: carrying their halo took copies in bands, and short tiles marching down
// the image in long chains took 1.03-3.26x the 32-row tiles' time (perf_tests/README.md, "Tried and rejected").
// Hosts chain only forwards without partial derivatives: with them, chains of 8 took 1.04-1.06x the time of single
// tiles in SSIM's fwd+bwd, 1.08-1.13x in masked weights', 1.20x in normalized statistics' (2 cores, 1x3x1080x1920,
// perf_tests/README.md, "Schedules and the router"), while the forward alone took 0.93-0.94x (SSIM).
// KSSIM_TUNE_FUSED_FORWARD_CHAIN=n in the environment (Tuning.hpp) forces n for the others, for tuning runs only.
// The rules for any kernel of tiles of rows x cols map pixels, chained down a column of tiles: `resident` of its
// teams run at once on a GPU (0: unknown), each of team_threads threads; partials: the kernel writes the partial
// derivatives.
template <class ExecSpace>
int tile_chain(const ExecSpace& exec, const Geometry& g, int rows, int cols, long long resident,
               long long team_threads, bool partials) {
  const int forced = tuning::forced_forward_chain();
  const int max_chain = Kokkos::max(8, 256 / rows);
  if (rows < g.window - 1) return 1;
  if (forced > 0) return forced < max_chain ? forced : max_chain;
  if (!is_gpu_space_v<ExecSpace> && partials) return 1;
  const auto teams = [&](int c) {  // volumes: a team's tiles lie in one depth slice
    return 1LL * g.images() * g.d * ceil_div(g.ow, cols) * ceil_div(ceil_div(g.oh, rows), c);
  };
  if (resident > 0 && teams(1) < 2 * resident) {
    const int tiles_y = ceil_div(g.oh, rows), halo = g.window - 1;
    int best = 1;
    double best_cost = 0;
    for (int c = 1; c <= max_chain && c <= tiles_y; ++c) {
      const int longest = ceil_div(tiles_y, ceil_div(tiles_y, c));  // the longest chain when c splits tiles_y
      if (longest != c) continue;  // the same teams as a shorter chain
      const double rounds = double((teams(c) + resident - 1) / resident);  // whole waves
      const double cost = rounds * c * (double(c) * rows + halo) / (double(c) * rows);
      if (c == 1 || cost < best_cost) best = c, best_cost = cost;
    }
    return best;
  }
  const long long slots = is_gpu_space_v<ExecSpace> ? exec.concurrency() / team_threads : exec.concurrency();
  const long long wanted = 2 * (slots > 0 ? slots : 1);
  int chain = 1;
  for (int c = 2; c <= max_chain; ++c)
    if (teams(c) >= wanted) chain = c;
  return chain;
}
template <class ExecSpace, class T>
int fused_forward_chain(const ExecSpace& exec, const Geometry& g, int rows, bool partials) {
  using K = FusedForward<ExecSpace, T>;
  return tile_chain(exec, g, rows, K::cols, fused_resident_teams<ExecSpace, T>(exec),
                    Kokkos::min(max_team_threads, rows / K::col_rows * (K::cols / K::col_chunk)), partials);
}

// Whether the fused forward's last team finishes the mean (FusedForward::finish) instead of a sum_map launch
// after it: on GPUs, for problems whose teams all run at once (one wave of the resident teams), where the
// second launch and its chain of dependent memory operations were a fifth of the forward (64x1x128x128:
// sum_map 6.8-7.9 us of 34, ncu). Every team then pays a memory fence and an atomic at its end, which in a grid
// of many waves costs more than the launch (forwards 7-13% slower: perf_tests/README.md, "Tried and rejected").
// KSSIM_TUNE_FUSED_FORWARD_FINISH=0 / 1 in the environment (Tuning.hpp) forces it, for tests and tuning runs only.
template <class ExecSpace, class T>
bool fused_forward_finishes(const ExecSpace& exec, const Geometry& g, int rows, int chain) {
  using K = FusedForward<ExecSpace, T>;
  if (g.volumetric) return false;  // the slice-fused forward: the depth pass after it sums the map
  const int tiles = K::tiles_per_image(g, rows);
  // The map's sums and the L1 or weight sums beside them (sum_slices: two arrays at once).
  if (K::finish_capacity(rows, g.window) < 2 * OrderedSum::scratch(tiles)) return false;
  if (const auto forced = tuning::forced_forward_finish()) return *forced;
  const long long resident = fused_resident_teams<ExecSpace, T>(exec);
  return resident > 0 && 1LL * g.images() * K::teams_per_image(g, rows, chain) <= resident;
}

// The fused forward of a GPU without partial derivatives (SSIM's value and map: evaluation, train=False) as
// its own kernel. In one kernel with the partials' stores, the forward is held at 48 registers by its launch
// bound and spills (11 taps: 36 / 96 bytes of spill stores / loads, ptxas -v); without them, 8 / 24 (7 taps
// would have none, but only the standard 11-tap window gets the kernel). perf_tests/ptxas/spills.sh shows
// both. Hosts keep one instance (no spills there; compile time).
// KSSIM_TUNE_FUSED_FORWARD_MAP_ONLY=0 (Tuning.hpp): one kernel for both, for A/B runs only.
// FusedForwardRun: FusedForward's run with outputs compiled out, as a kernel of its own (FixedTaps' Kernel).
template <class Kernel, bool Partials, bool Statistics = false, bool L1 = false>
struct FusedForwardRun {
  Kernel kernel;
  template <int Taps, class Team>
  KOKKOS_FUNCTION void run(const Team& team) const {
    kernel.template run<Taps, Partials, Statistics, L1>(team);
  }
};
template <class Kernel>
using MapOnly = FusedForwardRun<Kernel, false>;

// Fills in what a fused forward's launch derives from its geometry, rows, chain and the options' team shape.
template <class ExecSpace, class T, class Term, class S, class O, bool Weighted>
void set_fused_forward_shape(FusedForward<ExecSpace, T, Term, S, O, Weighted>& k, const Options& opts) {
  using K = FusedForward<ExecSpace, T, Term, S, O, Weighted>;
  k.vector_lanes = team_vector_length<ExecSpace>(opts, K::cols / K::col_chunk);
  if (K::l1_items && k.sums.l1.tile_sums) {  // the L1 shares must fit the moment planes' scratch
    const long long lanes = opts.team_size ? 1LL * opts.team_size * k.vector_lanes : max_team_threads;
    if (lanes + TileItemSums::group_count(int(lanes)) > K::finish_capacity(k.rows, k.window.size))
      throw std::invalid_argument("kssim: team_size " + std::to_string(opts.team_size) + " x vector_length " +
                                  std::to_string(k.vector_lanes) + " is too large for the fused loss's tiles");
  }
  k.tiles_x = ceil_div(k.g.ow, K::cols);
  k.tiles_y = ceil_div(k.g.oh, k.rows);
  k.per_image = make_index_divisor(K::teams_per_image(k.g, k.rows, k.chain));
  k.per_row = make_index_divisor(k.tiles_x);
  k.slice_depth = make_index_divisor(k.g.d);
  k.x_rows = nested_row_stride(k.x);
  k.y_rows = nested_row_stride(k.y);
}

// Fills in the launch shape of k (its rows and chain must be set) and runs it.
template <class ExecSpace, class T, class Term, class S, class O, bool Weighted>
void fused_forward(const ExecSpace& exec, const Options& opts, FusedForward<ExecSpace, T, Term, S, O, Weighted> k) {
  using K = FusedForward<ExecSpace, T, Term, S, O, Weighted>;
  set_fused_forward_shape(k, opts);
  // Registers: the map formula of several outputs at once, as in the stage schedule's map pass; min_teams is
  // the launch bound (fused_min_teams).
  const auto run = [&](const auto& kernel, auto min_teams) {
    auto policy = make_team_policy<decltype(min_teams)::value>(
        exec, k.league_size(), k.rows / K::col_rows, K::cols / K::col_chunk, K::Tile::scratch_level,
        k.scratch_size(), opts, kernel, Kokkos::ParallelForTag{});
    launch("kssim::fused_forward", policy, kernel);
  };
  // Only for the standard window on images of the compute type: one more kernel per (Term, T), not per tap
  // count and 16-bit type (each GPU kernel instance costs a minute or more of nvcc).
  // Masked SSIM's weighted forward too (KSSIM_TUNE_FUSED_WEIGHTED_MAP_ONLY, Tuning.hpp).
  const bool l1 = k.sums.l1.tile_sums != nullptr;
  if constexpr (K::Tile::gpu && KSSIM_TUNE_FUSED_FORWARD_MAP_ONLY != 0 && std::is_same_v<S, T> && std::is_same_v<O, T> &&
                (!Weighted || KSSIM_TUNE_FUSED_WEIGHTED_MAP_ONLY != 0)) {
    if (!k.wanted.any() && k.window.size == 11 && !l1)
      return run(FixedTaps<11, MapOnly<K>>{MapOnly<K>{k}}, std::integral_constant<int, fused_min_teams<T>>{});
  }
  const auto run_with_partials = [&](const auto& fixed) {
    run(fixed, std::integral_constant<int, fused_min_teams<T, KSSIM_TUNE_FUSED_PARTIALS_MIN_TEAMS>>{});
  };
  if constexpr (K::l1_items) {
    // The fused loss's kernels: the standard window's and the run-time tap count's, not 7 taps' (each instance
    // is compiled for every tap count and 16-bit type of every GPU build and of CI's gpu_paths tests).
    if (l1) {
      using L1Kernel = FusedForwardRun<K, true, false, true>;
      if (k.window.size == 11) return run_with_partials(FixedTaps<11, L1Kernel>{L1Kernel{k}});
      return run_with_partials(FixedTaps<0, L1Kernel>{L1Kernel{k}});
    }
  }
  with_fixed_taps<ExecSpace>(k.window.size, k, run_with_partials);
}

}  // namespace kssim::impl
