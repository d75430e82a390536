// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The fused backward schedule for images (2D): both adjoint passes and the chain rule in one TeamPolicy
// kernel, tile by tile in team scratch. A team owns Rows x Cols gradient pixels of one (n, c) slice and
//   1. stages the K partial-derivative planes of the forward pass (MapBlock.hpp) over the map positions
//      whose windows cover its pixels (zero outside the map);
//   2. runs the adjoint column pass (correlate_axis_tile with the reversed window, the adjoint-column
//      stage's arithmetic) into K planes in scratch, for the tile's rows and all staged columns;
//   3. runs the adjoint row pass and the chain rule (GradientStore.hpp), adds the fused loss's L1 gradient
//      in the instance with L1 (L1Term.hpp; a compile-time choice: the runtime branch made SSIM's instance,
//      which its launch bound holds to 48 registers on sm_90, spill more, ptxas -v), and writes the gradients.
// Volumes run it on every depth slice after the adjoint depth pass (FusedSlices.hpp).
// Bytes per pixel (float, DRAM): 4K in (halo re-reads hit the caches) + 8 for the images + 4 per gradient
// out; the stage schedule writes the K adjoint-column planes and reads them back on top: 8K bytes more.
// Images of a 16-bit storage type S are converted to T as they are read, gradients rounded to their type O
// as they are stored (Storage.hpp); on GPUs four 16-bit pixels per load and store (Packed16.hpp).

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/stages/GradientStore.hpp>
#include <kssim/impl/stages/L1Term.hpp>
#include <kssim/impl/core/Packed16.hpp>
#include <kssim/impl/schedules/FusedForward.hpp>
#include <kssim/impl/core/Tuning.hpp>
#include <kssim/impl/core/UpstreamFactor.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

namespace kssim::impl {

// Output rows per work item of the fused backward's adjoint column pass, float GPU tiles with K = 3 planes
// (one image's gradient): each staged row is read from scratch once for 8 outputs instead of 4. With 4, that
// pass's scalar scratch loads kept the shared-memory pipe full (the largest warp-stall reason of the kernel,
// 22.5% "mio"); with 8, 176 items per tile instead of 352 (one round of 256 threads instead of two) and 24
// accumulators, no spills (ptxas -v). At 1x3x1080x1920 valid: scratch loads 17.5 -> 13.2 per pixel, "mio"
// 14.1%, the kernel 85.2 -> 80.9 us (ncu); fwd+bwd 2.5-4.6% faster on the four large shapes (A/B in one run,
// whose forwards differed by 0-1.5%; perf_tests/README.md, "Kernel variants"). K = 4 keeps 4 (32 accumulators
// would not fit the 48 registers of the launch bound). KSSIM_TUNE_FUSED_BACKWARD_COL_ROWS (Tuning.hpp).

template <class ExecSpace, class T, int K, bool L1 = false, class S = T, class O = T>
struct FusedBackward {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Tile = FusedTiles<ExecSpace, T>;
  using Scratch = typename Tile::Scratch;
  static constexpr int cols = Tile::cols, row_chunk = Tile::row_chunk, col_chunk = Tile::col_chunk,
                       col_rows = Tile::col_rows;  // sets the team's shape
  static constexpr int adjoint_rows =
      Tile::gpu && K == 3 && sizeof(T) == 4 ? KSSIM_TUNE_FUSED_BACKWARD_COL_ROWS : col_rows;  // above
  static_assert(adjoint_rows % col_rows == 0);

  // Only pointers, extents and PODs (KernelArrays.hpp).
  PlaneArray<T> partials;       // K planes (NC * Ho * row_pitch) in PartialPlanes order
  InputArray<S> x, y;
  OutputArray<O> grad1, grad2;  // either may be null
  const T* shifts = nullptr;    // (NC, 2), Recentring.hpp
  UpstreamFactor upstream;  // optional device factor (none: 1)
  const double* slice_factors = nullptr;  // optional device factor per (n, c) slice (null: 1; MS-SSIM)
  double scale = 1;                  // host factor, already divided by the map size
  double l1_scale = 0;               // L1: the L1 term's host factor, already divided by the pixels
  bool accumulate = false;
  GaussianWindow<T> window;  // already reversed
  Geometry g;
  int rows = 0;   // gradient rows per tile
  int chain = 1;  // vertically adjacent tiles per team (fused_backward_chain)
  int tiles_x = 0, tiles_y = 0;
  IndexDivisor per_image, per_row;  // the league rank's divisors: teams per slice, tiles_x (IndexDivisor.hpp)
  // Volumes (the slice-fused schedule, FusedSlices.hpp): every depth slice is a 2D image, slice s = nc * g.d + z,
  // and `partials` are the adjoint depth pass's K planes (NC * D, Ho, Wo); slice_depth divides by g.d (the
  // slice's (n, c) for its shifts and factor).
  IndexDivisor slice_depth;
  std::ptrdiff_t x_rows = -1, y_rows = -1, grad1_rows = -1, grad2_rows = -1;  // nested_row_stride

  // Staged planes and the adjoint-column planes are as wide as the row pass needs: Cols + window - 1,
  // padded to whole row chunks.
  KOKKOS_INLINE_FUNCTION static int width(int window) { return Tile::pitch(cols + window - 1); }
  static std::size_t scratch_bytes(int rows, int window) {
    const int w = width(window);
    return RowScratch<ExecSpace, T>::bytes(K, rows + window - 1, w) + RowScratch<ExecSpace, T>::bytes(K, rows, w);
  }
  // Teams per 2D slice (an (n, c) image or a depth slice): one per column of tiles and chain of `chain` tiles
  // down it.
  static int teams_per_image(const Geometry& g, int rows, int chain) {
    return ceil_div(g.w, cols) * ceil_div(ceil_div(g.h, rows), chain);
  }
  int league_size() const { return g.images() * g.d * teams_per_image(g, rows, chain); }

  // The team's tiles, top to bottom: the team's set-up (its indices, scratch, factors) is paid once per chain.
  // Tile k + 1's staging may start while other threads still run tile k's row pass: that pass reads only
  // `column`, which tile k + 1 writes after the barrier that follows its staging.
  template <int Taps>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const int rank = team.league_rank(), nc = per_image.quotient(rank), in_image = rank - nc * int(per_image.divisor);
    const int chain_row = per_row.quotient(in_image), ix0 = (in_image - chain_row * tiles_x) * cols;
    // With a compile-time tap count the width is a constant too: the flat indices below divide by constants.
    constexpr int fixed_w = Taps > 0 ? RowScratch<ExecSpace, T>::pitch(cols + Taps - 1) : 0;
    const int w = fixed_w > 0 ? fixed_w : width(window.size), halo_rows = rows + window.size - 1;
    const Scratch staged = RowScratch<ExecSpace, T>::allocate(team, K, halo_rows, w);
    const Scratch column = RowScratch<ExecSpace, T>::allocate(team, K, rows, w);
    const int image = slice_depth.quotient(nc);
    const double team_factor = scale * upstream.value();
    const T factor = T(slice_factors ? team_factor * slice_factors[image] : team_factor);
    for (int k = 0; k < chain; ++k) {
      const int iy0 = (chain_row * chain + k) * rows;
      if (iy0 >= g.h) break;  // the same for the whole team
      tile<Taps>(team, staged, column, factor, nc, image, iy0, ix0);
    }
  }

  // Gradient rows iy0 .. iy0 + rows - 1, columns ix0 .. ix0 + cols - 1 of slice nc, of (n, c) slice `image`.
  template <int Taps>
  KOKKOS_FUNCTION void tile(const Team& team, const Scratch& staged, const Scratch& column, T factor, int nc,
                            int image, int iy0, int ix0) const {
    // The adjoint of the forward correlation's offsets g.pad_h, g.pad_w.
    const int offset_h = window.size - 1 - g.pad_h, offset_w = window.size - 1 - g.pad_w;
    constexpr int fixed_w = Taps > 0 ? RowScratch<ExecSpace, T>::pitch(cols + Taps - 1) : 0;
    const int w = fixed_w > 0 ? fixed_w : width(window.size);

    stage_partials<fixed_w>(team, staged, nc, iy0 - offset_h, ix0 - offset_w);
    team.team_barrier();

    // Adjoint column pass: every staged column, adjoint_rows x col_chunk outputs per thread and lane.
    const int col_lanes = w / col_chunk;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, rows / adjoint_rows * col_lanes), [&](int e) {
      const int j0 = e / col_lanes * adjoint_rows, i0 = e % col_lanes * col_chunk;
      T acc[K][adjoint_rows][col_chunk];
      correlate_axis_tile<K, adjoint_rows, col_chunk, Taps>(staged, window, j0, i0, acc);
      for (int k = 0; k < K; ++k)
        for (int q = 0; q < adjoint_rows; ++q) store_chunk<col_chunk>(&column(k, j0 + q, i0), acc[k][q], col_chunk);
    });
    team.team_barrier();

    // Adjoint row pass and the chain rule, row_chunk gradient pixels per lane.
    constexpr int row_lanes = cols / row_chunk;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, rows * row_lanes), [&](int e) {
      const int i = e / row_lanes, j0 = e % row_lanes * row_chunk;
      const int iy = iy0 + i, ix = ix0 + j0;
      if (iy >= g.h || ix >= g.w) return;
      T acc[K][row_chunk];
      if constexpr (Tile::gpu && Taps > 0 && row_chunk % 4 == 0) {
        // Staged rows into registers with vector loads (rows aligned to a chunk), every multiply-add from them.
        constexpr int staged_len = (row_chunk + Taps - 1 + 3) / 4 * 4;
        for (int k = 0; k < K; ++k) {
          T v[staged_len];
          load_quads(&column(k, i, j0), v);
          for (int u = 0; u < row_chunk; ++u) acc[k][u] = 0;
          KSSIM_UNROLL
          for (int t = 0; t < Taps; ++t)
            for (int u = 0; u < row_chunk; ++u) acc[k][u] += window.weight[t] * v[u + t];
        }
      } else {
        correlate_planes<K, row_chunk, Taps>(&column(0, i, j0), column.stride(0), 1, window, acc);
      }
      const int n_valid = ix + row_chunk <= g.w ? row_chunk : g.w - ix;
      const int r = nc * g.h + iy;
      const T s1 = shifts[2 * image], s2 = shifts[2 * image + 1];
      const S* xrow = row_pointer(x, x_rows, r);
      const S* yrow = row_pointer(y, y_rows, r);
      const std::ptrdiff_t xs = x.stride(4), ys = y.stride(4);
      T xv[row_chunk], yv[row_chunk];
      bool packed = false;
      if constexpr (Tile::gpu && !std::is_same_v<S, T> && row_chunk == 4) {
        // 16-bit images: both images' pixels in packed loads (Packed16.hpp), all in flight together.
        const int xo = xs == 1 && n_valid == row_chunk ? packed_offset(xrow, ix, g.w) : -1;
        const int yo = ys == 1 && n_valid == row_chunk ? packed_offset(yrow, ix, g.w) : -1;
        if (xo >= 0 && yo >= 0) {
          load_packed4(xrow, ix, xo, xv);
          load_packed4(yrow, ix, yo, yv);
          for (int u = 0; u < row_chunk; ++u) {
            xv[u] -= s1;
            yv[u] -= s2;
          }
          packed = true;
        }
      }
      if (!packed)
        for (int u = 0; u < row_chunk; ++u) {  // pixels past the image edge: defined, never stored
          xv[u] = u < n_valid ? to_compute<T>(xrow[(ix + u) * xs]) - s1 : T(0);
          yv[u] = u < n_valid ? to_compute<T>(yrow[(ix + u) * ys]) - s2 : T(0);
        }
      // The gradient of image I (0: x, 1: y) by the chain rule, plus the L1 term's, into `grad`.
      const auto store = [&](auto image, const OutputArray<O>& grad, std::ptrdiff_t grad_rows) {
        constexpr int I = decltype(image)::value;
        T v[row_chunk];
        chain_rule<I>(acc, xv, yv, factor, v);
        if constexpr (L1) add_l1_gradient<I>(xrow + ix * xs, xs, yrow + ix * ys, ys, n_valid, l1_factor(), v);
        store_gradient<Tile::gpu>(row_pointer(grad, grad_rows, r) + std::ptrdiff_t(ix) * grad.stride(4),
                                  grad.stride(4), v, n_valid, accumulate);
      };
      if (grad1.data()) store(std::integral_constant<int, 0>{}, grad1, grad1_rows);
      if (grad2.data()) store(std::integral_constant<int, 1>{}, grad2, grad2_rows);
    });
  }

  // The L1 gradient's factor, computed where it is used (not held in a register through the adjoint passes).
  KOKKOS_INLINE_FUNCTION T l1_factor() const { return T(l1_scale * upstream.value()); }

  // staged(k, i, j) = partial plane k at map row my0 + i, column mx0 + j of slice nc; 0 outside the map.
  // FixedWidth: the staged rows' width when it is a compile-time constant (else 0).
  template <int FixedWidth>
  KOKKOS_INLINE_FUNCTION void stage_partials(const Team& team, const Scratch& staged, int nc, int my0, int mx0) const {
    const int halo_rows = int(staged.extent(1)), w = FixedWidth > 0 ? FixedWidth : int(staged.extent(2));
    if constexpr (Tile::gpu && row_chunk % 4 == 0) {
      // Four consecutive pixels of every plane per lane: the row's address arithmetic once for 4K loads
      // issued together, then K 128-bit scratch stores (the rows hold whole, aligned chunks). The element loop
      // below cost a division by the width, 64-bit index arithmetic and K scalar stores per staged pixel.
      const int quads = w / 4;
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, halo_rows * quads), [&](int e) {
        const int i = e / quads, j = e % quads * 4, my = my0 + i, mx = mx0 + j;
        T v[K][4];
        for (int k = 0; k < K; ++k)
          for (int u = 0; u < 4; ++u) v[k][u] = T(0);
        if (unsigned(my) < unsigned(g.oh)) {
          const std::size_t row = (std::size_t(nc) * g.oh + my) * g.row_pitch;
          if (mx >= 0 && mx + 4 <= g.ow) {
            for (int k = 0; k < K; ++k)
              for (int u = 0; u < 4; ++u) v[k][u] = partials(k, row + mx + u);
          } else {  // the map's edges
            for (int k = 0; k < K; ++k)
              for (int u = 0; u < 4; ++u)
                if (unsigned(mx + u) < unsigned(g.ow)) v[k][u] = partials(k, row + mx + u);
          }
        }
        for (int k = 0; k < K; ++k) store_quads(&staged(k, i, j), v[k]);
      });
    } else if constexpr (Tile::gpu) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, halo_rows * w), [&](int e) {
        const int i = e / w, j = e % w, my = my0 + i, mx = mx0 + j;
        const bool inside = unsigned(my) < unsigned(g.oh) && unsigned(mx) < unsigned(g.ow);
        const std::size_t idx = inside ? (std::size_t(nc) * g.oh + my) * g.row_pitch + mx : 0;
        T v[K];
        for (int k = 0; k < K; ++k) v[k] = inside ? partials(k, idx) : T(0);
        for (int k = 0; k < K; ++k) staged(k, i, j) = v[k];
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K * halo_rows), [&](int ki) {
        const int k = ki / halo_rows, i = ki % halo_rows, my = my0 + i, ahead = my + staging_prefetch_rows;
        if (i + staging_prefetch_rows < halo_rows && unsigned(ahead) < unsigned(g.oh))
          prefetch_row_segment(&partials(k, (std::size_t(nc) * g.oh + ahead) * g.row_pitch), mx0, w, g.ow);
        if (unsigned(my) < unsigned(g.oh))
          stage_row_segment(&staged(k, i, 0), &partials(k, (std::size_t(nc) * g.oh + my) * g.row_pitch), 1, mx0, w,
                            g.ow, T(0), T(0));
        else
          for (int j = 0; j < w; ++j) staged(k, i, j) = T(0);
      });
    }
  }
};

// The tile height the fused backward schedule uses (0: it does not fit).
template <class ExecSpace, class T, int K>
int fused_backward_rows(const ExecSpace& exec, int window) {
  return FusedTiles<ExecSpace, T>::fitting_rows(
      exec, [&](int rows) { return FusedBackward<ExecSpace, T, K>::scratch_bytes(rows, window); },
      FusedBackward<ExecSpace, T, K>::adjoint_rows);
}

// Tiles per team down a column of tiles (FusedBackward::chain). A team's set-up (its indices, two scratch
// allocations, the functor's fields and factors) is ~46 of the kernel's ~250 instructions per pixel, each
// thread owning 4 pixels of a tile (sm_90, ncu, 1x3x1080x1920: perf_tests/README.md, "Where the time goes");
// a chain pays it once per c tiles, but leaves fewer teams to fill the waves. Chains of 2 and 4 were no faster
// (within 1.5% of 1 on the large shapes, 4 slower on small ones: perf_tests/README.md, "Kernel variants"), so 1.
// KSSIM_TUNE_FUSED_BACKWARD_CHAIN=n in the environment (Tuning.hpp) sets n (at most 8), for tests and tuning runs.
inline int fused_backward_chain() {
  const int forced = tuning::forced_backward_chain();
  return forced < 1 ? 1 : forced > 8 ? 8 : forced;
}

// Fills in the launch shape of k (its rows and chain must be set) and runs it.
template <class ExecSpace, class T, int K, bool L1, class S, class O>
void fused_backward(const ExecSpace& exec, const Options& opts, FusedBackward<ExecSpace, T, K, L1, S, O> k) {
  using B = FusedBackward<ExecSpace, T, K, L1, S, O>;
  k.tiles_x = ceil_div(k.g.w, B::cols);
  k.tiles_y = ceil_div(k.g.h, k.rows);
  k.per_image = make_index_divisor(B::teams_per_image(k.g, k.rows, k.chain));
  k.per_row = make_index_divisor(k.tiles_x);
  k.slice_depth = make_index_divisor(k.g.d);
  if (k.g.volumetric) k.g.row_pitch = k.g.ow;  // the adjoint depth pass's planes are unpadded
  k.x_rows = nested_row_stride(k.x);
  k.y_rows = nested_row_stride(k.y);
  k.grad1_rows = nested_row_stride(k.grad1);
  k.grad2_rows = nested_row_stride(k.grad2);
  with_fixed_taps<ExecSpace>(k.window.size, k, [&](const auto& kernel) {
    constexpr int min_teams = fused_min_teams<T, KSSIM_TUNE_FUSED_BACKWARD_MIN_TEAMS>;
    auto policy = make_team_policy<min_teams>(exec, k.league_size(), k.rows / B::col_rows, B::cols / B::col_chunk,
                                              B::Tile::scratch_level, B::scratch_bytes(k.rows, k.window.size), opts,
                                              kernel, Kokkos::ParallelForTag{});
    launch("kssim::fused_backward", policy, kernel);
  });
}

}  // namespace kssim::impl
