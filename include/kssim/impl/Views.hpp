#pragma once
// The View types the kernels see. Every user View, whatever its layout and rank, is re-expressed as an
// unmanaged rank-5 LayoutStride View (N, C, D, H, W), so each kernel is instantiated once per
// (execution space, value type) instead of once per layout and rank.

#include <Kokkos_Core.hpp>
#include <array>
#include <type_traits>

namespace kssim::impl {

template <class T, class Mem>
using InputView = Kokkos::View<const T*****, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T, class Mem>
using OutputView = Kokkos::View<T*****, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
// Workspace planes: plane-major, each plane a flat (NC, D, H, W)-ordered array.
template <class T, class Mem>
using Planes = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;

template <class View>
std::array<int, View::rank()> extents_of(const View& v) {
  std::array<int, View::rank()> e{};
  for (int i = 0; i < int(View::rank()); ++i) e[i] = int(v.extent(i));
  return e;
}

// A rank-4 (N, C, H, W) or rank-5 (N, C, D, H, W) View as a rank-5 strided View; rank 4 gets D = 1.
template <class Target, class View>
Target as_rank5(const View& v) {
  constexpr int rank = View::rank();
  static_assert(rank == 4 || rank == 5);
  std::size_t s[8] = {};
  v.stride(s);
  Kokkos::LayoutStride layout;
  int src = 0;
  for (int dst = 0; dst < 5; ++dst) {
    if (rank == 4 && dst == 2) {  // the missing depth axis: extent 1, any stride
      layout.dimension[dst] = 1;
      layout.stride[dst] = 1;
      continue;
    }
    layout.dimension[dst] = v.extent(src);
    layout.stride[dst] = s[src];
    ++src;
  }
  return Target(v.data(), layout);
}

// Rows of a rank-5 (N, C, D, H, W) View are its (N, C, D, H) index tuples, numbered
// r = ((n C + c) D + d) H + h. When each outer stride is the next one times its extent (LayoutRight, and
// Views padded or sliced only along W), row r starts at data() + r * stride(3), and the kernels find it
// without the four integer divisions that decode r (each a long instruction sequence on GPUs).
// Returns that row stride, or -1 for other layouts (LayoutLeft, general strides).
template <class View>
std::ptrdiff_t nested_row_stride(const View& v) {
  static_assert(View::rank() == 5);
  std::ptrdiff_t expected = std::ptrdiff_t(v.stride(3)) * std::ptrdiff_t(v.extent(3));
  for (int k = 2; k >= 0; --k) {
    if (v.extent(k) > 1 && std::ptrdiff_t(v.stride(k)) != expected) return -1;  // extent 1: index always 0
    expected *= std::ptrdiff_t(v.extent(k));
  }
  return std::ptrdiff_t(v.stride(3));
}

// The first element of row r of v; `nested` is nested_row_stride(v).
template <class View>
KOKKOS_INLINE_FUNCTION typename View::pointer_type row_pointer(const View& v, std::ptrdiff_t nested, int r) {
  if (nested >= 0) return v.data() + std::ptrdiff_t(r) * nested;
  const int h = int(v.extent(3)), d = int(v.extent(2)), c = int(v.extent(1));
  const int hh = r % h, rest = r / h, dd = rest % d, nc = rest / d;
  return &v(nc / c, nc % c, dd, hh, 0);
}

}  // namespace kssim::impl
