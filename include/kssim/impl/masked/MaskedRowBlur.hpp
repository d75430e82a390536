// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Not RowBlur with a weight: every staged sample and tap carries the mask (three staged planes, five outputs,
// moments around each window's weighted means), and RowBlur's vector loads and L1 path do not apply to masks.
// The row loop and the launch are RowBlur.hpp's (for_each_image_row, launch_row_pass).
// Forward stage 1 of masked SSIM with normalized statistics (MaskMode::Normalized): RowBlur.hpp's row pass
// with the mask's weight on every sample, writing the five planes of MaskedMoments.hpp. Each team stages a
// tile of rows plus the window's halo: the recentred pixels of both images (0 where the mask is 0: missing
// data may be NaN) and the mask (0 outside the image), images and mask of 16-bit storage S converted as they
// are staged (Storage.hpp).

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/masked/MaskedMoments.hpp>
#include <kssim/impl/stages/RowBlur.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/stages/StageKernel.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// One row of the images and the mask as the masked passes stage it (null pointers: a row outside the image):
// x' = x - s1, y' = y - s2 where the mask is > 0, else 0 (missing data may be NaN), and the mask, all 0
// outside the image.
template <class T, class S>
struct MaskedRow {
  const S *x = nullptr, *y = nullptr, *m = nullptr;
  std::ptrdiff_t xs = 1, ys = 1, ms = 1;  // column strides
  int w = 0;                              // the row's length
  T s1 = 0, s2 = 0;

  // Column ix (any column).
  KOKKOS_FORCEINLINE_FUNCTION void sample(int ix, T& xo, T& yo, T& mo) const {
    const T mv = m != nullptr && ix >= 0 && ix < w ? to_compute<T>(m[ix * ms]) : T(0);
    const bool valid = mv > T(0);
    xo = valid ? to_compute<T>(x[ix * xs]) - s1 : T(0);
    yo = valid ? to_compute<T>(y[ix * ys]) - s2 : T(0);
    mo = mv;
  }
  // Columns ix0 .. ix0 + count - 1 into xo, yo, mo: the columns inside the image in one branch-free loop (every
  // pixel loaded, then selected), which hosts vectorise; per-element tests kept the staging scalar.
  KOKKOS_FORCEINLINE_FUNCTION void segment(int ix0, int count, T* xo, T* yo, T* mo) const {
    const int lo = m == nullptr ? count : Kokkos::clamp(-ix0, 0, count);
    const int hi = m == nullptr ? count : Kokkos::clamp(w - ix0, lo, count);
    for (int j = 0; j < lo; ++j) xo[j] = yo[j] = mo[j] = T(0);
    KSSIM_VECTORIZE
    for (int j = lo; j < hi; ++j) {
      const int ix = ix0 + j;
      const T mv = to_compute<T>(m[ix * ms]);
      xo[j] = select_value(mv > T(0), to_compute<T>(x[ix * xs]) - s1, T(0));  // Vectorize.hpp: ?: stayed scalar
      yo[j] = select_value(mv > T(0), to_compute<T>(y[ix * ys]) - s2, T(0));
      mo[j] = mv;
    }
    for (int j = hi; j < count; ++j) xo[j] = yo[j] = mo[j] = T(0);
  }
};

template <class ExecSpace, class T, class S = T>
struct MaskedRowBlur {
  KSSIM_ROW_STAGE_TILES(ExecSpace, T);

  // Only pointers, extents and PODs (KernelArrays.hpp).
  InputArray<S> x, y;
  InputArray<S> mask;          // (N, C, D, H, W), channels possibly broadcast (stride 0)
  const T* shifts = nullptr;   // (NC, 2), Recentring.hpp
  PlaneArray<T> stats;         // (5, NC*D*H*Wo), MaskedMoments.hpp
  GaussianWindow<T> window;
  Geometry g;
  int col_tiles = 0;
  std::ptrdiff_t x_rows = -1, y_rows = -1, mask_rows = -1;  // nested_row_stride (KernelArrays.hpp)

  KOKKOS_INLINE_FUNCTION int rows() const { return g.images() * g.d * g.h; }
  KOKKOS_INLINE_FUNCTION int halo_cols() const { return tile_cols + window.size - 1; }
  int league_size() const { return ceil_div(rows(), tile_rows) * col_tiles; }
  std::size_t scratch_bytes() const { return RowScratch<ExecSpace, T>::bytes(3, tile_rows, halo_cols()); }

  template <int Taps>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const int row0 = (team.league_rank() / col_tiles) * tile_rows;
    const int col0 = (team.league_rank() % col_tiles) * tile_cols;
    const int nrows = rows();
    const Scratch tile = RowScratch<ExecSpace, T>::allocate(team, 3, tile_rows, halo_cols());

    for_each_image_row(*this, team, row0, [&](int i, int r, const T s1, const T s2, const S* xrow, const S* yrow) {
      const MaskedRow<T, S> row{xrow, yrow, row_pointer(mask, mask_rows, r), x.stride(4), y.stride(4),
                                mask.stride(4), g.w, s1, s2};
      const int count = int(tile.extent(2)), ix0 = col0 - g.pad_w;
      if constexpr (Tile::gpu) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count),
                             [&](int j) { row.sample(ix0 + j, tile(0, i, j), tile(1, i, j), tile(2, i, j)); });
      } else {
        row.segment(ix0, count, &tile(0, i, 0), &tile(1, i, 0), &tile(2, i, 0));
      }
    });
    team.team_barrier();

    for_each_tile_row<tile_rows>(team, row0, nrows, [&](int i, int r) {
      const std::size_t base = std::size_t(r) * g.row_pitch;
      for_each_output_chunk<tile_cols, chunk>(team, col0, g.ow, [&](int j0) {
        T m[masked_planes][chunk];
        masked_row_moments<chunk, Taps>(&tile(0, i, j0), &tile(1, i, j0), &tile(2, i, j0), window, m);
        const int nu = col0 + j0 + chunk <= g.ow ? chunk : g.ow - col0 - j0;
        for (int k = 0; k < masked_planes; ++k) store_chunk<chunk>(&stats(k, base + col0 + j0), m[k], nu);
      });
    });
  }
};

template <class ExecSpace, class T, class S>
void masked_row_blur(const ExecSpace& exec, const Options& opts, MaskedRowBlur<ExecSpace, T, S> k) {
  k.mask_rows = nested_row_stride(k.mask);
  launch_row_pass("kssim::masked_row_blur", exec, opts, k, k.g.ow);
}

}  // namespace kssim::impl
