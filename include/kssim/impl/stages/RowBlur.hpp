// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Forward stage 1, the row blur: correlate both images along W with the Gaussian and write the four
// moment planes m1, m2, vs, cov (LocalMoments.hpp) of extent (NC, D, H, Wo). Each team stages a tile of
// rows plus the window's halo in scratch; each output subtracts its window's centre pixel before squaring.
// For the fused L1 + SSIM loss it also sums |x - y| over the pixels of each row it owns (L1Term.hpp).
// Images of a 16-bit storage type S are converted to the compute type T as they are staged (Storage.hpp; on
// GPUs four pixels per load, Packed16.hpp).

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/stages/L1Term.hpp>
#include <kssim/impl/stages/LocalMoments.hpp>
#include <kssim/impl/core/Packed16.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/stages/StageKernel.hpp>

#include <Kokkos_Core.hpp>
#include <type_traits>

namespace kssim::impl {

// What the row passes (RowBlur, MaskedRowBlur.hpp, AdjointRow.hpp) share besides StageKernel.hpp. A row pass
// functor k has the images x, y with their nested_row_stride x_rows, y_rows, the recentring shifts, the
// geometry g, col_tiles and rows().

// The staging loop of a row pass's tile: f(i, r, s1, s2, xrow, yrow) for each row r = row0 + i of the tile on
// the team's threads, with its slice's recentring shifts (Recentring.hpp) and the first pixels of its rows.
template <class Pass, class Team, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_image_row(const Pass& k, const Team& team, int row0, const F& f) {
  const int slice_rows = k.g.d * k.g.h;
  for_each_tile_row<Pass::tile_rows>(team, row0, k.rows(), [&](int i, int r) {
    const int nc = r / slice_rows;
    f(i, r, k.shifts[2 * nc], k.shifts[2 * nc + 1], row_pointer(k.x, k.x_rows, r), row_pointer(k.y, k.y_rows, r));
  });
}

// Sets what a row pass derives from its arrays (its column tiles over `width` outputs, the images' row
// strides) and launches it.
template <class ExecSpace, class Pass>
void launch_row_pass(const char* name, const ExecSpace& exec, const Options& opts, Pass& k, int width) {
  k.col_tiles = ceil_div(width, k.tile_cols);
  k.x_rows = nested_row_stride(k.x);
  k.y_rows = nested_row_stride(k.y);
  launch_stage(name, exec, opts, k, k.league_size(), k.tile_rows, k.tile_cols);
}

template <class ExecSpace, class T, class S = T>
struct RowBlur {
  KSSIM_ROW_STAGE_TILES(ExecSpace, T);

  // Only pointers, extents and PODs (KernelArrays.hpp).
  InputArray<S> x, y;
  const T* shifts = nullptr;       // (NC, 2), Recentring.hpp
  PlaneArray<T> stats;     // (4, NC*D*H*Wo)
  GaussianWindow<T> window;
  Geometry g;
  int col_tiles = 0;
  std::ptrdiff_t x_rows = -1, y_rows = -1;  // nested_row_stride of x and y (Views.hpp)
  double* l1_tile_sums = nullptr;  // the fused loss (null: none): one sum of |x - y| per (row, column tile)

  KOKKOS_INLINE_FUNCTION int rows() const { return g.images() * g.d * g.h; }
  int halo_cols() const { return tile_cols + window.size - 1; }
  int league_size() const { return ceil_div(rows(), tile_rows) * col_tiles; }
  std::size_t scratch_bytes() const { return RowScratch<ExecSpace, T>::bytes(2, tile_rows, halo_cols()); }

  template <int Taps>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const int row0 = (team.league_rank() / col_tiles) * tile_rows;
    const int col0 = (team.league_rank() % col_tiles) * tile_cols;
    const int nrows = rows(), halo = tile_cols + window.size - 1;
    const Scratch tile = RowScratch<ExecSpace, T>::allocate(team, 2, tile_rows, halo);

    // Stage recentred pixels; the zero padding outside the image becomes -shift after recentring.
    for_each_image_row(*this, team, row0, [&](int i, int r, const T s1, const T s2, const S* xrow, const S* yrow) {
      const std::size_t xs = x.stride(4), ys = y.stride(4);
      if constexpr (Tiles<ExecSpace, T>::gpu) {
        // The whole padded row, so that the vector loads below read defined values only. Interior tiles
        // of contiguous rows (nearly all) take a plain copy: the general loop's per-element index and
        // bounds arithmetic was a quarter of this kernel's instructions.
        const int first = col0 - g.pad_w, count = int(tile.extent(2));
        if (xs == 1 && ys == 1 && first >= 0 && first + count <= g.w) {
          const S* xp = xrow + first;
          const S* yp = yrow + first;
          T* tx = &tile(0, i, 0);
          T* ty = &tile(1, i, 0);
          bool quads = false;
          if constexpr (std::is_same_v<S, T> && chunk % 4 == 0) quads = quad_aligned(xp) && quad_aligned(yp);
          if (quads) {  // 128-bit loads and stores
            if constexpr (std::is_same_v<S, T>)
              Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count / 4), [&](int q) {
                T a[4], b[4];
                load_quads(xp + 4 * q, a);
                load_quads(yp + 4 * q, b);
                for (int u = 0; u < 4; ++u) {
                  a[u] -= s1;
                  b[u] -= s2;
                }
                store_quads(tx + 4 * q, a);
                store_quads(ty + 4 * q, b);
              });
          } else if constexpr (!std::is_same_v<S, T> && chunk % 4 == 0) {
            // 16-bit images: packed loads of four pixels (Packed16.hpp), 128-bit scratch stores (count is a
            // multiple of the chunk: RowScratch). Rows whose words would leave the image go element by element.
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count / 4), [&](int q) {
              T a[4], b[4];
              const int xo = packed_offset(xrow, first + 4 * q, g.w), yo = packed_offset(yrow, first + 4 * q, g.w);
              if (xo >= 0 && yo >= 0) {
                load_packed4(xrow, first + 4 * q, xo, a);
                load_packed4(yrow, first + 4 * q, yo, b);
              } else {
                for (int u = 0; u < 4; ++u) {
                  a[u] = to_compute<T>(xp[4 * q + u]);
                  b[u] = to_compute<T>(yp[4 * q + u]);
                }
              }
              for (int u = 0; u < 4; ++u) {
                a[u] -= s1;
                b[u] -= s2;
              }
              store_quads(tx + 4 * q, a);
              store_quads(ty + 4 * q, b);
            });
          } else {
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count), [&](int j) {
              tx[j] = to_compute<T>(xp[j]) - s1;
              ty[j] = to_compute<T>(yp[j]) - s2;
            });
          }
        } else {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count), [&](int j) {
            const int col = g.source(first + j, g.w);  // -1: zero padding
            tile(0, i, j) = (col >= 0 ? to_compute<T>(xrow[col * xs]) : T(0)) - s1;
            tile(1, i, j) = (col >= 0 ? to_compute<T>(yrow[col * ys]) : T(0)) - s2;
          });
        }
      } else {
        // Outside the image every pixel is 0, i.e. -shift after recentring (or the pixel the padding reads).
        stage_row_segment(&tile(0, i, 0), xrow, xs, col0 - g.pad_w, halo, g.w, s1, -s1, g.padding);
        stage_row_segment(&tile(1, i, 0), yrow, ys, col0 - g.pad_w, halo, g.w, s2, -s2, g.padding);
      }
      if (l1_tile_sums) {  // the row's pixels this tile owns, raw (L1Term.hpp), while they are in cache
        const int owned = owned_end(col0, tile_cols, g.ow, g.w) - col0;
        double l1 = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, owned),
            [&](int j, double& acc) {
              acc += l1_abs_difference<T>(xrow[(col0 + j) * xs], yrow[(col0 + j) * ys]);
            },
            l1);
        Kokkos::single(Kokkos::PerThread(team),
                       [&]() { l1_tile_sums[std::size_t(r) * col_tiles + team.league_rank() % col_tiles] = l1; });
      }
    });
    team.team_barrier();

    for_each_tile_row<tile_rows>(team, row0, nrows, [&](int i, int r) {
      const std::size_t base = std::size_t(r) * g.row_pitch;
      for_each_output_chunk<tile_cols, chunk>(team, col0, g.ow, [&](int j0) {
        T m[moment_planes][chunk];
        // GPUs with a fixed tap count share one centre per chunk; other windows (very narrow Gaussians among
        // them) subtract each output's own centre: see row_moments.
        row_moments<chunk, Taps, Tiles<ExecSpace, T>::gpu && (Taps > 0)>(&tile(0, i, j0), &tile(1, i, j0), window, m);
        const int nu = col0 + j0 + chunk <= g.ow ? chunk : g.ow - col0 - j0;
        const std::size_t idx = base + col0 + j0;
        bool stored = false;
        if constexpr (Tiles<ExecSpace, T>::gpu && chunk % 4 == 0) {  // rows padded to whole chunks: vector stores
          if (nu == chunk && g.row_pitch % chunk == 0) {
            for (int k = 0; k < moment_planes; ++k) store_quads(&stats(k, idx), m[k]);
            stored = true;
          }
        }
        if (!stored)
          for (int k = 0; k < moment_planes; ++k) store_chunk<chunk>(&stats(k, idx), m[k], nu);
      });
    });
  }
};

template <class ExecSpace, class T, class S>
void row_blur(const ExecSpace& exec, const Options& opts, RowBlur<ExecSpace, T, S> k) {
  launch_row_pass("kssim::row_blur", exec, opts, k, k.g.ow);
}

}  // namespace kssim::impl
