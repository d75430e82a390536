#pragma once
// The L1 half of the fused L1 + SSIM loss (kssim/L1Ssim.hpp), as the SSIM kernels compute it on the side:
//  - forward: the kernel that reads the images (the row blur, or the fused forward) sums |x - y| over the
//    pixels its team owns into one double per team (L1Sums), which sum_map adds up in a fixed order;
//  - backward: the last backward kernel (the adjoint row pass, or the fused backward) adds
//    factor * sign(x - y) to d/dx and -factor * sign(x - y) to d/dy.
// Both read the raw pixels, not the recentred tile (Recentring.hpp): x - s1 and y - s2 are rounded, so
// (x - s1) - (y - s2) + (s1 - s2) need not be exactly x - y, and equal pixels must give exactly sign 0.

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

// Sum of |x - y| over n pixels of a row, `xs` and `ys` elements apart.
template <class T>
KOKKOS_INLINE_FUNCTION double l1_row_sum(const T* x, std::ptrdiff_t xs, const T* y, std::ptrdiff_t ys, int n) {
  double sum = 0;
  for (int j = 0; j < n; ++j) sum += Kokkos::abs(double(x[j * xs]) - double(y[j * ys]));
  return sum;
}

// Adds the L1 gradient of image 1 (Image == 0: +factor sign(x - y)) or image 2 (Image == 1: -factor
// sign(x - y)) to the first n_valid of a chunk of gradient values; x and y point at the chunk's pixels.
template <int Image, int Chunk, class T>
KOKKOS_FORCEINLINE_FUNCTION void add_l1_gradient(const T* x, std::ptrdiff_t xs, const T* y, std::ptrdiff_t ys,
                                                 int n_valid, T factor, T (&v)[Chunk]) {
  const T f = Image == 0 ? factor : -factor;
  for (int u = 0; u < Chunk; ++u)
    if (u < n_valid) v[u] += f * l1_sign(T(x[u * xs] - y[u * ys]));
}

}  // namespace kssim::impl
