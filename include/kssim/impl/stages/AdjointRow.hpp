// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Backward stage 2, the adjoint row pass: the reversed-window correlation along W of the K planes left
// by the adjoint column pass, followed by the chain rule (GradientStore.hpp), times an optional factor per
// (n, c) slice (MS-SSIM's chain rule through its product of scales) and, in the instance with PixelWeights, a
// weight per pixel (the mask of normalized statistics: d B(m x) / dx = m B^T; a compile-time choice, so that
// SSIM's instance carries none of its code), plus, in the instance with L1, the fused loss's L1 gradient
// (L1Term.hpp; compile-time too: its runtime branch took SSIM's instance from 56-64 to 69-86 registers on
// sm_90, ptxas -v). Gradients are written or accumulated. Images of a 16-bit storage type S are converted
// to T as they are staged, gradients rounded to their type O (Storage.hpp).

#include <kssim/impl/stages/ColumnBlur.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/stages/GradientStore.hpp>
#include <kssim/impl/stages/L1Term.hpp>
#include <kssim/impl/stages/RowBlur.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/UpstreamFactor.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/stages/StageKernel.hpp>

#include <Kokkos_Core.hpp>
#include <type_traits>

namespace kssim::impl {

template <class ExecSpace, class T, int K, bool PixelWeights = false, bool L1 = false, class S = T, class O = T>
struct AdjointRow {
  KSSIM_ROW_STAGE_TILES(ExecSpace, T);

  // K planes of extent (NC, D, H, Wo): d_var, d_cov, then d_m1 and/or d_m2. Plane indices are compile-time
  // constants below (d_m1 is plane 2, d_m2 the last): a runtime index would put the accumulators in local memory.
  // Only pointers, extents and PODs (KernelArrays.hpp).
  PlaneArray<T> in;
  PartialPlanes wanted;  // the plane layout of `in`; a gradient is stored where its array is not null
  InputArray<S> x, y;
  OutputArray<O> grad1, grad2;  // either may be null
  const T* shifts = nullptr;            // (NC, 2), Recentring.hpp
  UpstreamFactor upstream;  // optional device factor (none: 1)
  const double* slice_factors = nullptr;  // optional device factor per (n, c) slice (null: 1)
  InputArray<S> pixel_weights;            // PixelWeights: the weight per pixel, channels may be broadcast
  double scale = 1;                          // host factor, already divided by the map size
  double l1_scale = 0;  // L1: the L1 term's host factor, already divided by the pixels
  bool accumulate = false;
  GaussianWindow<T> window;  // already reversed
  Geometry g;
  int col_tiles = 0;
  // nested_row_stride of x, y, grad1, grad2 (Views.hpp)
  std::ptrdiff_t x_rows = -1, y_rows = -1, grad1_rows = -1, grad2_rows = -1, weights_rows = -1;

  KOKKOS_INLINE_FUNCTION int rows() const { return g.images() * g.d * g.h; }
  int league_size() const { return ceil_div(rows(), tile_rows) * col_tiles; }
  // K staged planes with their halo, then the two images' recentred pixels of the tile (staged with the
  // planes so that all global loads of a team are in flight together, before the one barrier).
  std::size_t scratch_bytes() const {
    return RowScratch<ExecSpace, T>::bytes(K, tile_rows, tile_cols + window.size - 1) +
           RowScratch<ExecSpace, T>::bytes(2, tile_rows, tile_cols);
  }

  template <int Taps>  // see FixedTaps.hpp
  KOKKOS_FUNCTION void run(const Team& team) const {
    const int row0 = (team.league_rank() / col_tiles) * tile_rows;
    const int col0 = (team.league_rank() % col_tiles) * tile_cols;
    const int nrows = rows(), halo = tile_cols + window.size - 1, slice_rows = g.d * g.h;
    const int offset = window.size - 1 - g.pad_w;  // adjoint of the row blur's offset g.pad_w
    const Scratch tile = RowScratch<ExecSpace, T>::allocate(team, K, tile_rows, halo);
    const Scratch pixels = RowScratch<ExecSpace, T>::allocate(team, 2, tile_rows, tile_cols);

    // Stage the K planes with their halo, and the recentred pixels.
    for_each_image_row(*this, team, row0, [&](int i, int r, const T s1, const T s2, const S* xrow, const S* yrow) {
      const std::size_t base = std::size_t(r) * g.row_pitch;
      const std::size_t xs = x.stride(4), ys = y.stride(4);
      if constexpr (Tiles<ExecSpace, T>::gpu) {
        // The whole padded row, so that the vector loads below read defined values only; all of a lane's
        // global loads in one iteration, so they are in flight together. Interior tiles of contiguous
        // images (nearly all) take plain copies (see RowBlur).
        const int first = col0 - offset, count = int(tile.extent(2));
        if (xs == 1 && ys == 1 && first >= 0 && first + count <= g.ow && col0 + tile_cols <= g.w) {
          const T* src[K];
          for (int k = 0; k < K; ++k) src[k] = &in(k, base + first);
          const S* xp = xrow + col0;
          const S* yp = yrow + col0;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count), [&](int j) {
            for (int k = 0; k < K; ++k) tile(k, i, j) = src[k][j];
            if (j < tile_cols) {
              pixels(0, i, j) = to_compute<T>(xp[j]) - s1;
              pixels(1, i, j) = to_compute<T>(yp[j]) - s2;
            }
          });
        } else {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, count), [&](int j) {
            const int col = col0 + j - offset;
            const bool inside = col >= 0 && col < g.ow;
            for (int k = 0; k < K; ++k) tile(k, i, j) = inside ? in(k, base + col) : T(0);
            if (j < tile_cols) {  // pixels past the image edge: defined, never stored
              const bool in_image = col0 + j < g.w;
              pixels(0, i, j) = in_image ? to_compute<T>(xrow[(col0 + j) * xs]) - s1 : T(0);
              pixels(1, i, j) = in_image ? to_compute<T>(yrow[(col0 + j) * ys]) - s2 : T(0);
            }
          });
        }
      } else {
        // Partial derivatives vanish outside the map. Pixel columns past the image edge are only read by
        // outputs that are never stored, so they need no value but a defined one.
        for (int k = 0; k < K; ++k)
          stage_row_segment(&tile(k, i, 0), &in(k, base), 1, col0 - offset, halo, g.ow, T(0), T(0));
        stage_row_segment(&pixels(0, i, 0), xrow, xs, col0, int(tile_cols), g.w, s1, T(0));
        stage_row_segment(&pixels(1, i, 0), yrow, ys, col0, int(tile_cols), g.w, s2, T(0));
      }
    });
    team.team_barrier();

    const double team_factor = scale * upstream.value();
    for_each_tile_row<tile_rows>(team, row0, nrows, [&](int i, int r) {
      const T factor = T(slice_factors ? team_factor * slice_factors[r / slice_rows] : team_factor);
      const S* const weights_row = PixelWeights ? row_pointer(pixel_weights, weights_rows, r) : nullptr;
      O* const g1row = grad1.data() ? row_pointer(grad1, grad1_rows, r) : nullptr;
      O* const g2row = grad2.data() ? row_pointer(grad2, grad2_rows, r) : nullptr;
      for_each_output_chunk<tile_cols, chunk>(team, col0, g.w, [&](int j0) {
        T acc[K][chunk], xs[chunk], ys[chunk];
        if constexpr (Tiles<ExecSpace, T>::gpu && Taps > 0 && chunk % 4 == 0) {
          // Staged rows into registers with vector loads (rows aligned to a chunk: RowScratch in Tiles.hpp),
          // then every multiply-add from registers.
          constexpr int staged = (chunk + Taps - 1 + 3) / 4 * 4;
          for (int k = 0; k < K; ++k) {
            T v[staged];
            load_quads(&tile(k, i, j0), v);
            for (int u = 0; u < chunk; ++u) acc[k][u] = 0;
            KSSIM_UNROLL
            for (int t = 0; t < Taps; ++t)
              for (int u = 0; u < chunk; ++u) acc[k][u] += window.weight[t] * v[u + t];
          }
          load_quads(&pixels(0, i, j0), xs);
          load_quads(&pixels(1, i, j0), ys);
        } else {
          correlate_planes<K, chunk, Taps>(&tile(0, i, j0), tile.stride(0), 1, window, acc);
          for (int u = 0; u < chunk; ++u) {
            xs[u] = pixels(0, i, j0 + u);
            ys[u] = pixels(1, i, j0 + u);
          }
        }
        // The chain rule over the whole chunk (branch-free), then the stores, which stop at the image edge.
        const int n_valid = col0 + j0 + chunk <= g.w ? chunk : g.w - col0 - j0;
        constexpr bool gpu = Tiles<ExecSpace, T>::gpu;
        [[maybe_unused]] T weights[chunk];
        if constexpr (PixelWeights)
          load_weights(weights_row + std::ptrdiff_t(col0 + j0) * pixel_weights.stride(4), weights, n_valid);
        // One image's gradient (Image: 0 or 1, a compile-time plane index, see `in`).
        const auto store_image_gradient = [&](auto image, O* grow, const OutputArray<O>& grad) {
          constexpr int Image = decltype(image)::value;
          T v[chunk];
          chain_rule<Image>(acc, xs, ys, factor, v);
          if constexpr (PixelWeights) apply_weights(weights, v);
          if constexpr (L1) add_l1_gradient<Image>(raw_pixels(x, x_rows, r, col0 + j0), x.stride(4),
                                                      raw_pixels(y, y_rows, r, col0 + j0), y.stride(4), n_valid,
                                                      l1_factor(), v);
          store_gradient<gpu>(grow + std::ptrdiff_t(col0 + j0) * grad.stride(4), grad.stride(4), v, n_valid,
                              accumulate);
        };
        if (grad1.data()) store_image_gradient(std::integral_constant<int, 0>{}, g1row, grad1);
        if (grad2.data()) store_image_gradient(std::integral_constant<int, 1>{}, g2row, grad2);
      });
    });
  }

  // The L1 gradient reads the raw pixels again (the staged ones are recentred: L1Term.hpp), and computes its
  // factor where it is used.
  KOKKOS_INLINE_FUNCTION static const S* raw_pixels(const InputArray<S>& img, std::ptrdiff_t rows, int r, int col) {
    return row_pointer(img, rows, r) + std::ptrdiff_t(col) * img.stride(4);
  }
  KOKKOS_INLINE_FUNCTION T l1_factor() const { return T(l1_scale * upstream.value()); }

  // The pixel weights of a chunk (0 past the image edge).
  KOKKOS_FORCEINLINE_FUNCTION void load_weights(const S* src, T (&w)[chunk], int n_valid) const {
    for (int u = 0; u < chunk; ++u) w[u] = u < n_valid ? to_compute<T>(src[u * pixel_weights.stride(4)]) : T(0);
  }
  // Pixels of weight 0 get exactly 0: a select, for their values may be NaN (missing data).
  KOKKOS_FORCEINLINE_FUNCTION static void apply_weights(const T (&w)[chunk], T (&v)[chunk]) {
    for (int u = 0; u < chunk; ++u) v[u] = w[u] > T(0) ? w[u] * v[u] : T(0);
  }

};

template <class ExecSpace, class T, int K, bool PixelWeights, bool L1, class S, class O>
void adjoint_row(const ExecSpace& exec, const Options& opts,
                 AdjointRow<ExecSpace, T, K, PixelWeights, L1, S, O> k) {
  k.grad1_rows = nested_row_stride(k.grad1);
  k.grad2_rows = nested_row_stride(k.grad2);
  k.weights_rows = nested_row_stride(k.pixel_weights);
  launch_row_pass("kssim::adjoint_row", exec, opts, k, k.g.w);
}

}  // namespace kssim::impl
