// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What a kernel functor may hold, and the conversion of the user's Views into it.
//
// THE RULE: a functor or lambda passed to a Kokkos dispatch (parallel_for / parallel_reduce) holds only
// raw pointers, integer extents and strides, and plain structs of them: the arrays below, Geometry,
// AxisPass, GaussianWindow, PartialPlanes. Never a Kokkos::View. With the mdspan-based View (Kokkos
// develop from 4.6.99, 4.7, 5.x) under C++20, nvcc lays out some Views (rank 1, with an empty
// [[no_unique_address]] member) differently in device code than the host compiler does, so a functor
// holding one is copied to the GPU with one layout and read with another: its kernel silently computes
// nothing. Whether a given Kokkos is affected depends on versions kssim does not control, so kssim
// depends on no Kokkos type's layout inside a kernel. Views are converted here, on the host, before every
// dispatch; SelfCheck.hpp verifies at first use that host and device agree on every functor's layout.
//
// Every user image, whatever its layout and rank, becomes a rank-5 strided array (N, C, D, H, W), so each
// kernel is instantiated once per (execution space, value type) instead of once per layout and rank.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <type_traits>

namespace kssim::impl {

// A rank-5 strided array (N, C, D, H, W) of T (const T for inputs). The accessors mirror a View's.
template <class T>
struct ImageArray {
  using value_type = T;
  using non_const_value_type = std::remove_const_t<T>;
  using pointer_type = T*;

  T* ptr = nullptr;
  int ext[5] = {0, 0, 0, 0, 0};
  std::ptrdiff_t str[5] = {0, 0, 0, 0, 0};

  KOKKOS_INLINE_FUNCTION T* data() const { return ptr; }
  KOKKOS_INLINE_FUNCTION int extent(int i) const { return ext[i]; }
  KOKKOS_INLINE_FUNCTION std::ptrdiff_t stride(int i) const { return str[i]; }
  KOKKOS_INLINE_FUNCTION T& operator()(int n, int c, int d, int h, int w) const {
    return ptr[n * str[0] + c * str[1] + d * str[2] + h * str[3] + w * str[4]];
  }
};
template <class T>
using InputArray = ImageArray<const T>;
template <class T>
using OutputArray = ImageArray<T>;

// Workspace planes: `planes` flat arrays of plane_size elements, one after the other. The memory is owned
// by a PlaneStore (a View) that outlives the kernels.
template <class T>
struct PlaneArray {
  T* ptr = nullptr;
  std::size_t plane_size = 0;
  int planes = 0;

  KOKKOS_INLINE_FUNCTION T* data() const { return ptr; }
  KOKKOS_INLINE_FUNCTION std::size_t stride(int) const { return plane_size; }  // from one plane to the next
  KOKKOS_INLINE_FUNCTION T& operator()(int k, std::size_t i) const { return ptr[k * plane_size + i]; }
};
template <class T, class Mem>
using PlaneStore = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;

template <class T, class Mem>
PlaneArray<T> plane_array(const PlaneStore<T, Mem>& v) {
  return {v.data(), v.extent(1), int(v.extent(0))};
}

template <class View>
std::array<int, View::rank()> extents_of(const View& v) {
  std::array<int, View::rank()> e{};
  for (int i = 0; i < int(View::rank()); ++i) e[i] = int(v.extent(i));
  return e;
}

// The rank of the batch a View of images stands for: a rank-2 (H, W) View is one image (N, C, H, W) and a
// rank-3 (D, H, W) View one volume (N, C, D, H, W), with N = C = 1.
template <class View>
inline constexpr int batch_rank_v = View::rank() < 4 ? int(View::rank()) + 2 : int(View::rank());

// The extents of that batch: (1, 1, H, W) or (1, 1, D, H, W) for one image or volume.
template <class View>
std::array<int, batch_rank_v<View>> batch_extents(const View& v) {
  constexpr int rank = View::rank(), missing = batch_rank_v<View> - rank;
  std::array<int, batch_rank_v<View>> e{};
  for (int i = 0; i < missing; ++i) e[i] = 1;
  for (int i = 0; i < rank; ++i) e[missing + i] = int(v.extent(i));
  return e;
}

// A View of images as a rank-5 strided (N, C, D, H, W) array: rank 4 (N, C, H, W) gets D = 1, rank 3 (D, H, W)
// N = C = 1, rank 2 (H, W) all three.
template <class Target, class View>
Target as_rank5(const View& v) {
  constexpr int rank = View::rank();
  static_assert(rank >= 2 && rank <= 5);
  std::size_t s[8] = {};
  v.stride(s);
  Target t;
  t.ptr = v.data();
  int src = 0;
  for (int dst = 0; dst < 5; ++dst) {
    const bool missing = (rank < 4 && dst < 2) || (rank % 2 == 0 && dst == 2);  // N and C, or D
    if (missing) {  // an axis the View does not have: extent 1, any stride
      t.ext[dst] = 1;
      t.str[dst] = 1;
      continue;
    }
    t.ext[dst] = int(v.extent(src));
    t.str[dst] = std::ptrdiff_t(s[src]);
    ++src;
  }
  return t;
}

// Rows of a rank-5 (N, C, D, H, W) array are its (N, C, D, H) index tuples, numbered
// r = ((n C + c) D + d) H + h. When each outer stride is the next one times its extent (LayoutRight, and
// Views padded or sliced only along W), row r starts at data() + r * stride(3), and the kernels find it
// without the four integer divisions that decode r (each a long instruction sequence on GPUs).
// Returns that row stride, or -1 for other layouts (LayoutLeft, general strides).
template <class T>
std::ptrdiff_t nested_row_stride(const ImageArray<T>& v) {
  std::ptrdiff_t expected = v.stride(3) * std::ptrdiff_t(v.extent(3));
  for (int k = 2; k >= 0; --k) {
    if (v.extent(k) > 1 && v.stride(k) != expected) return -1;  // extent 1: index always 0
    expected *= std::ptrdiff_t(v.extent(k));
  }
  return v.stride(3);
}

// The first element of row r of v; `nested` is nested_row_stride(v).
template <class T>
KOKKOS_INLINE_FUNCTION T* row_pointer(const ImageArray<T>& v, std::ptrdiff_t nested, int r) {
  if (nested >= 0) return v.data() + std::ptrdiff_t(r) * nested;
  const int h = v.extent(3), d = v.extent(2), c = v.extent(1);
  const int hh = r % h, rest = r / h, dd = rest % d, nc = rest / d;
  return &v(nc / c, nc % c, dd, hh, 0);
}

}  // namespace kssim::impl
