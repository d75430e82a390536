// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The L1 half of the fused L1 + SSIM loss (kssim/L1SSIMLoss.hpp), as the SSIM kernels compute it on the side:
//  - forward: the kernel that reads the images (the row blur, or the fused forward) sums |x - y| over the
//    pixels its team owns into one double per team (L1Sums), which sum_map adds up in a fixed order;
//  - backward: the last backward kernel (the adjoint row pass, or the fused backward) adds
//    factor * sign(x - y) to d/dx and -factor * sign(x - y) to d/dy.
// Both read the raw pixels, not the recentred tile (Recentring.hpp): x - s1 and y - s2 are rounded, so
// (x - s1) - (y - s2) + (s1 - s2) need not be exactly x - y, and equal pixels must give exactly sign 0.

#include <kssim/impl/core/Storage.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// sign(d) with sign(0) = 0 (PyTorch's gradient of |d|), and NaN for NaN, which the gradient then carries.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T l1_sign(T d) {
  return d > T(0) ? T(1) : d < T(0) ? T(-1) : d == T(0) ? T(0) : d;
}

// The end of the input indices a tile owns along one axis, so that the tiles of a map pass cover every
// input pixel exactly once: [o0, o0 + len) clipped to the image, and the last tile (the one that reaches
// the map's end) also takes the pixels past the map (valid padding: the window - 1 pixels at the end).
// Those are inside the tile's staged halo, which ends at o0 - pad + len + window - 1 >= image_extent.
KOKKOS_INLINE_FUNCTION int owned_end(int o0, int len, int map_extent, int image_extent) {
  return o0 + len >= map_extent ? image_extent : o0 + len;
}

// The input pixels [row0, row1) x [col0, col1) whose |x - y| a kernel adds where it stages rows that overlap its
// neighbours' (the GPU fused forward: a team's chain of tiles, owned_end's rows and columns). add(iy, ix, x, y,
// sum) adds those of four consecutive pixels of row iy from column ix, in compute type T, in double.
// |x - y| of one pixel of storage type P, whose compute type is T (Storage.hpp), in double.
template <class T, class P>
KOKKOS_FORCEINLINE_FUNCTION double l1_abs_difference(const P& x, const P& y) {
  return Kokkos::abs(double(to_compute<T>(x)) - double(to_compute<T>(y)));
}

// The input pixels [row0, row1) x [col0, col1) whose |x - y| a kernel adds where it stages rows that overlap its
// neighbours' (the GPU fused forward: a team's chain of tiles, owned_end's rows and columns). add(iy, ix, x, y,
// sum) adds those of four consecutive pixels of row iy from column ix, in compute type T, in double.
struct OwnedPixels {
  int row0 = 0, row1 = 0, col0 = 0, col1 = 0;
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION void add(int iy, int ix, const T (&x)[4], const T (&y)[4], double& sum) const {
    if (iy < row0 || iy >= row1) return;
    for (int u = 0; u < 4; ++u) {  // a select, not a branch: a pixel outside adds an exact 0, even if NaN
      const double d = l1_abs_difference<T>(x[u], y[u]);
      sum += ix + u >= col0 && ix + u < col1 ? d : 0.0;
    }
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION void add(int iy, int ix, T x, T y, double& sum) const {
    const double d = l1_abs_difference<T>(x, y);
    sum += iy >= row0 && iy < row1 && ix >= col0 && ix < col1 ? d : 0.0;
  }
};

// Sum of |x - y| over n pixels of a row, `xs` and `ys` elements apart.
template <class T, class P>
KOKKOS_INLINE_FUNCTION double l1_row_sum(const P* x, std::ptrdiff_t xs, const P* y, std::ptrdiff_t ys, int n) {
  double sum = 0;
  for (int j = 0; j < n; ++j) sum += l1_abs_difference<T>(x[j * xs], y[j * ys]);
  return sum;
}

// Adds the L1 gradient of image 1 (Image == 0: +factor sign(x - y)) or image 2 (Image == 1: -factor
// sign(x - y)) to the first n_valid of a chunk of gradient values; x and y point at the chunk's pixels,
// of storage type P.
template <int Image, int Chunk, class T, class P>
KOKKOS_FORCEINLINE_FUNCTION void add_l1_gradient(const P* x, std::ptrdiff_t xs, const P* y, std::ptrdiff_t ys,
                                                 int n_valid, T factor, T (&v)[Chunk]) {
  const T f = Image == 0 ? factor : -factor;
  for (int u = 0; u < Chunk; ++u)
    if (u < n_valid) v[u] += f * l1_sign(T(to_compute<T>(x[u * xs]) - to_compute<T>(y[u * ys])));
}

}  // namespace kssim::impl
