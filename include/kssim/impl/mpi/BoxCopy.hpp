// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Copies (or adds) an axis-aligned box of spatial cells, for every (n, c) slice, from one rank-5 array into
// another: the halo exchange packs the parts of a block that its neighbours need into a message buffer,
// unpacks received halos into the extended block, and, for gradients, adds the halo contributions that
// neighbours send back to their owner. One kernel serves every case; buffers are rank-5 arrays too.
// Kernels hold only ImageArrays (raw pointers, extents, strides) and PODs (KernelArrays.hpp).

#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>

#include <Kokkos_Core.hpp>
#include <array>

namespace kssim::impl::mpi {

// Cells [lo, hi) along (D, H, W) in the global field's coordinates.
struct Box {
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};

  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  int extent(int a) const { return hi[a] > lo[a] ? hi[a] - lo[a] : 0; }
  long long volume() const { return empty() ? 0 : (long long)extent(0) * extent(1) * extent(2); }
  Box intersect(const Box& o) const {
    Box b;
    for (int a = 0; a < 3; ++a) {
      b.lo[a] = lo[a] > o.lo[a] ? lo[a] : o.lo[a];
      b.hi[a] = hi[a] < o.hi[a] ? hi[a] : o.hi[a];
    }
    return b;
  }
  bool contains(const Box& o) const {
    for (int a = 0; a < 3; ++a)
      if (o.lo[a] < lo[a] || o.hi[a] > hi[a]) return false;
    return true;
  }
  bool operator==(const Box&) const = default;
};

// A rank-5 array placed in the global field: its spatial index 0 is the global cell `origin`.
template <class T>
struct PlacedArray {
  ImageArray<T> array;
  std::array<int, 3> origin{0, 0, 0};
};

// A contiguous (N, C, box) LayoutRight array over `data`, placed at the box's corner.
template <class T>
PlacedArray<T> packed(T* data, int n, int c, const Box& box) {
  PlacedArray<T> p;
  p.array.ptr = data;
  const int e[5] = {n, c, box.extent(0), box.extent(1), box.extent(2)};
  std::ptrdiff_t stride = 1;
  for (int i = 4; i >= 0; --i) {
    p.array.ext[i] = e[i];
    p.array.str[i] = stride;
    stride *= e[i];
  }
  p.origin = box.lo;
  return p;
}

// One team per row of the box (an (n, c, d, h) tuple), its threads and vector lanes along W: contiguous
// (coalesced on GPUs, vectorised on hosts) whenever the arrays are, and four integer divisions per row,
// not per element.
template <class T>
struct BoxCopyKernel {
  ImageArray<const T> src;
  ImageArray<T> dst;
  int src_lo[3], dst_lo[3];  // the box's first cell in each array's own indices
  int c, bd, bh, bw;         // channels and the box's extents
  bool add;

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int row = member.league_rank();
    const int h = row % bh;
    int rest = row / bh;
    const int d = rest % bd;
    rest /= bd;
    const int ch = rest % c, n = rest / c;
    T* out = &dst(n, ch, dst_lo[0] + d, dst_lo[1] + h, dst_lo[2]);
    const std::ptrdiff_t out_step = dst.str[4];
    if (!src.ptr) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, bw), [&](const int w) { out[w * out_step] = T(0); });
      return;
    }
    const T* in = &src(n, ch, src_lo[0] + d, src_lo[1] + h, src_lo[2]);
    const std::ptrdiff_t in_step = src.str[4];
    if (add)
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, bw),
                           [&](const int w) { out[w * out_step] = T(out[w * out_step] + in[w * in_step]); });
    else
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, bw), [&](const int w) { out[w * out_step] = in[w * in_step]; });
  }
};

// dst[box] = src[box] (or dst[box] += src[box] with `add`), box in global coordinates, inside both arrays;
// a src without data reads as zeros. N and C are the arrays' own (equal).
template <class ExecSpace, class T>
void copy_box(const ExecSpace& exec, const PlacedArray<const T>& src, const PlacedArray<T>& dst, const Box& box,
              bool add) {
  if (box.empty()) return;
  BoxCopyKernel<T> k{src.array, dst.array, {}, {}, dst.array.ext[1], box.extent(0), box.extent(1), box.extent(2), add};
  for (int a = 0; a < 3; ++a) {
    k.src_lo[a] = box.lo[a] - src.origin[a];
    k.dst_lo[a] = box.lo[a] - dst.origin[a];
  }
  const int rows = dst.array.ext[0] * k.c * k.bd * k.bh;
  launch(add ? "kssim::mpi::add_box" : "kssim::mpi::copy_box", Kokkos::TeamPolicy<ExecSpace>(exec, rows, Kokkos::AUTO), k);
}

// dst[box] = 0 for every (n, c) slice (not Kokkos::deep_copy(view, value): README.md, "Supported Kokkos
// versions").
template <class ExecSpace, class T>
void zero_box(const ExecSpace& exec, const PlacedArray<T>& dst, const Box& box) {
  copy_box<ExecSpace, T>(exec, PlacedArray<const T>{}, dst, box, false);
}

}  // namespace kssim::impl::mpi
