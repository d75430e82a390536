// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The last step of every backward schedule: the chain rule through the products x'^2, y'^2 and x'y' of
// the window sums, and the store of a chunk of gradient values.
//   d mean / d x = factor * (B^T d_m1 + 2 x' B^T d_var + y' B^T d_cov)
//   d mean / d y = factor * (B^T d_m2 + 2 y' B^T d_var + x' B^T d_cov)
// with factor = upstream / (number of map pixels) and acc[k] = B^T (partial plane k): d_var, d_cov, then
// d_m1 and/or d_m2 (MapBlock.hpp's PartialPlanes; d_m2 is the last plane).

#include <kssim/impl/core/Packed16.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Vectorize.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

namespace kssim::impl {

// Gradient of image 1 (Image == 0) or image 2 (Image == 1) for Chunk pixels with recentred values xs, ys.
template <int Image, int K, int Chunk, class T>
KOKKOS_FORCEINLINE_FUNCTION void chain_rule(const T (&acc)[K][Chunk], const T (&xs)[Chunk], const T (&ys)[Chunk],
                                            T factor, T (&v)[Chunk]) {
  KSSIM_VECTORIZE
  for (int u = 0; u < Chunk; ++u) {
    if constexpr (Image == 0)
      v[u] = factor * (acc[2][u] + 2 * xs[u] * acc[0][u] + ys[u] * acc[1][u]);
    else
      v[u] = factor * (acc[K - 1][u] + 2 * ys[u] * acc[0][u] + xs[u] * acc[1][u]);
  }
}

// Writes (or adds) the first n_valid of a chunk of gradient values from dst on, `stride` elements apart;
// a unit stride and a full chunk take the path the compiler vectorises. Gradients of another type O than
// the compute type T (16-bit outputs, Storage.hpp) are rounded once, after any accumulation in T.
template <bool Gpu, int Chunk, class T, class O>
  requires(!std::is_same_v<O, T>)
KOKKOS_FORCEINLINE_FUNCTION void store_gradient(O* dst, std::size_t stride, const T (&v)[Chunk], int n_valid,
                                                bool accumulate) {
  if constexpr (Gpu && Chunk % 4 == 0 && sizeof(O) == 2) {
    // GPUs: four 16-bit values per 64-bit store (Packed16.hpp), not four 16-bit stores.
    if (stride == 1 && n_valid == Chunk && packed_aligned(dst)) {
      for (int k = 0; k < Chunk; k += 4) store_packed4(dst + k, v + k, accumulate);
      return;
    }
  }
  for (int u = 0; u < Chunk; ++u) {
    if (u >= n_valid) continue;
    O& d = dst[u * stride];
    d = to_storage<O>(accumulate ? to_compute<T>(d) + v[u] : v[u]);
  }
}
template <bool Gpu, int Chunk, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_gradient(T* dst, std::size_t stride, const T (&v)[Chunk], int n_valid,
                                                bool accumulate) {
  if constexpr (Gpu && Chunk % 4 == 0) {
    // GPUs: 128-bit stores (scalar stores at a stride of 16 bytes touched 38% more memory sectors).
    if (stride == 1 && n_valid == Chunk && quad_aligned(dst)) {
      T w[Chunk];
      if (accumulate) load_quads(dst, w);
      for (int u = 0; u < Chunk; ++u) w[u] = accumulate ? w[u] + v[u] : v[u];
      store_quads(dst, w);
      return;
    }
  }
  if (stride == 1 && n_valid == Chunk) {
    if (accumulate) {
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) dst[u] += v[u];
    } else {
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) dst[u] = v[u];
    }
  } else {
    for (int u = 0; u < Chunk; ++u) {
      if (u >= n_valid) continue;
      if (accumulate)
        dst[u * stride] += v[u];
      else
        dst[u * stride] = v[u];
    }
  }
}

}  // namespace kssim::impl
