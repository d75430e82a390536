#pragma once
// Internal image storage of SSIMULACRA2: planes of h x w floats, row-major and packed, plane p = n * 3 + c
// for image n and channel c.
//
// Rule for every functor and lambda of the SSIMULACRA2 kernels: they hold only raw pointers, integer
// extents and strides, and plain structs of those. Never a Kokkos::View (member or capture): with Kokkos'
// mdspan-based View, nvcc can lay a View out differently in device code than the host compiler does, and a
// kernel that captured one silently did nothing. Views are turned into pointers before dispatch.

#include <cstddef>

namespace kssim::impl::s2 {

struct PlaneShape {
  int h = 0, w = 0;
  KOKKOS_INLINE_FUNCTION std::size_t size() const { return std::size_t(h) * std::size_t(w); }
};

// The extents of scale s of an h x w image: each scale halves the previous one, rounding up.
inline PlaneShape scale_shape(int h, int w, int s) {
  for (int i = 0; i < s; ++i) {
    h = (h + 1) / 2;
    w = (w + 1) / 2;
  }
  return {h, w};
}

// Elements of one plane summed over the six scales (offsets of a per-scale pyramid).
inline std::size_t pyramid_offset(int h, int w, int s) {
  std::size_t off = 0;
  for (int i = 0; i < s; ++i) off += scale_shape(h, w, i).size();
  return off;
}

}  // namespace kssim::impl::s2
