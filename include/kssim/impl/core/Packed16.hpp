// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Packed 16-bit pixels for the GPU code paths: four consecutive pixels of a 16-bit storage type
// (Storage.hpp) per 64-bit load or store instead of four 16-bit ones. A 16-bit access costs the same
// instruction and address arithmetic as a float one and moves half the bytes, so element loops over 16-bit
// images ran at float's speed (or slower, where float had 128-bit paths): packed, they are cheaper.
//
// Loads read only elements of the row, [0, n): a group of four that starts off a 64-bit boundary (odd
// widths, sub-views, LayoutStride Views, the halo's offset) is read as the two aligned words that hold it,
// and its 16-bit halves are shifted into place (little-endian: element k of a word is its bits 16k..16k+15);
// where those words would reach outside the row, the caller's scalar loop runs instead. Stores write only
// their own four elements, as one aligned 64-bit word (elsewhere the callers' scalar stores run: one packed
// store path keeps the kernels within their register budget). Each value is converted exactly as a scalar
// access converts it (to_compute / to_storage).

#include <kssim/impl/core/Storage.hpp>

#include <Kokkos_Core.hpp>
#include <bit>
#include <cstdint>

namespace kssim::impl {

static_assert(std::endian::native == std::endian::little, "kssim: packed 16-bit access assumes little-endian words");

// Four 16-bit values that move as one 64-bit word.
template <class S>
struct alignas(4 * sizeof(S)) Packed4 {
  S e[4];
};

// Where packed loads can read elements [a, a + 4) of a unit-stride row of n elements: how many elements
// row[a] lies past a 64-bit boundary (0-3), or -1 where the aligned words that hold them would reach outside
// [0, n). Address arithmetic only, so that callers issue every load of a lane together.
template <class S>
KOKKOS_FORCEINLINE_FUNCTION int packed_offset(const S* row, int a, int n) {
  static_assert(sizeof(S) == 2);
  if (a < 0 || a + 4 > n) return -1;
  const int off = int(reinterpret_cast<std::uintptr_t>(row + a) / sizeof(S) % 4);
  return a - off >= 0 && a - off + (off ? 8 : 4) <= n ? off : -1;
}

// v[u] = row[a + u] converted to T, u < 4, where off = packed_offset(row, a, n) >= 0: the one aligned word
// that holds them, or the two, whose 16-bit halves are moved into place. The words are read as 32-bit
// integers: a struct of 16-bit values cast to a 64-bit integer cost nvcc ~25 instructions of repacking.
template <class T, class S>
KOKKOS_FORCEINLINE_FUNCTION void load_packed4(const S* row, int a, int off, T* v) {
  struct alignas(4 * sizeof(S)) Words {
    std::uint32_t w[2];
  };
  const Words* q = reinterpret_cast<const Words*>(row + (a - off));
  // Both loads unconditionally (no branch between them); the second reads the first word again when aligned.
  const Words lo = q[0], hi = q[off != 0 ? 1 : 0];
  const bool skip = off >= 2;  // a whole 32-bit word
  std::uint32_t r0 = skip ? lo.w[1] : lo.w[0], r1 = skip ? hi.w[0] : lo.w[1];
  if (off % 2 != 0) {  // a 16-bit half more: funnel shifts
    const std::uint32_t r2 = skip ? hi.w[1] : hi.w[0];
    r0 = (r0 >> 16) | (r1 << 16);
    r1 = (r1 >> 16) | (r2 << 16);
  }
  const std::uint16_t h[4] = {std::uint16_t(r0), std::uint16_t(r0 >> 16), std::uint16_t(r1), std::uint16_t(r1 >> 16)};
  for (int u = 0; u < 4; ++u) v[u] = to_compute<T>(Kokkos::bit_cast<S>(h[u]));
}

// Four consecutive pixels [a, a + 4) of a row of n pixels with element stride `stride`, for any storage
// type S, in two steps like the two above: quad_offset (address arithmetic: -1 where the caller's element
// loop must run: a non-unit stride, the row's ends), then load_quad: 16-bit pixels by packed loads, other
// types by four loads at constant offsets.
template <class S>
KOKKOS_FORCEINLINE_FUNCTION int quad_offset(const S* row, std::ptrdiff_t stride, int a, int n) {
  if (stride != 1) return -1;
  if constexpr (sizeof(S) == 2)
    return packed_offset(row, a, n);
  else
    return a >= 0 && a + 4 <= n ? 0 : -1;
}
template <class T, class S>
KOKKOS_FORCEINLINE_FUNCTION void load_quad(const S* row, int a, int off, T* v) {
  if constexpr (sizeof(S) == 2)
    load_packed4(row, a, off, v);
  else
    for (int u = 0; u < 4; ++u) v[u] = to_compute<T>(row[a + u]);
}

// Whether p[0 .. 4) is one aligned 64-bit word (store_packed4).
template <class S>
KOKKOS_FORCEINLINE_FUNCTION bool packed_aligned(const S* p) {
  return reinterpret_cast<std::uintptr_t>(p) % sizeof(Packed4<S>) == 0;
}

// p[0 .. 4) = v[0 .. 4) rounded to O, after adding the old values in T when `accumulate` (as the scalar
// store_gradient does), as one 64-bit word: p must be packed_aligned.
template <class O, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_packed4(O* p, const T* v, bool accumulate) {
  static_assert(sizeof(O) == 2);
  Packed4<O>* q = reinterpret_cast<Packed4<O>*>(p);
  Packed4<O> w;
  if (accumulate) {
    const Packed4<O> old = *q;
    for (int u = 0; u < 4; ++u) w.e[u] = to_storage<O>(to_compute<T>(old.e[u]) + v[u]);
  } else {
    for (int u = 0; u < 4; ++u) w.e[u] = to_storage<O>(v[u]);
  }
  *q = w;
}

}  // namespace kssim::impl
