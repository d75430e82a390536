// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Extents of one SSIM problem. 2D images are volumes with D = 1 whose depth pass is skipped, so every
// kernel sees the same five axes (N, C, D, H, W) and the map extents (Do, Ho, Wo).

#include <kssim/Options.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <sstream>
#include <stdexcept>

namespace kssim::impl {

// The pixel that position i of an axis of n pixels reads under padding p, or -1 where it reads zero.
KOKKOS_INLINE_FUNCTION int padded_source(int i, int n, Padding p) {
  if (unsigned(i) < unsigned(n)) return i;
  if (p == Padding::Reflect) return i < 0 ? -i : 2 * (n - 1) - i;  // |i| < n: make_geometry checks the extents
  if (p == Padding::Replicate) return i < 0 ? 0 : n - 1;
  return -1;
}

struct Geometry {
  int n = 0, c = 0, d = 1, h = 0, w = 0;  // input extents
  int od = 1, oh = 0, ow = 0;             // map extents
  int window = 11;
  // Left padding of the forward correlation along W, H and D: 0 (valid) or window/2 (same). A slab of a
  // larger problem (Slabs.hpp) has its own padding along its outermost spatial axis: the rows of its input
  // that lie before the slab's first map row, counted from the window's first tap (0 inside the field).
  int pad_w = 0, pad_h = 0, pad_d = 0;
  int row_pitch = 0;    // elements from one row of the row-pass planes to the next: Wo, or more (Plan.hpp)
  bool volumetric = false;
  // What the forward passes read outside the image (Valid never reads there). A slab's axis is cut only
  // where its windows stay inside the field, so its own ends are the field's wherever it reads past them.
  Padding padding = Padding::Valid;

  // The pixel that position i of an axis of n pixels reads, or -1 where it reads zero.
  KOKKOS_INLINE_FUNCTION int source(int i, int n) const { return padded_source(i, n, padding); }
  // Whether positions outside the image read pixels: the backward then folds their gradients back
  // (BoundaryFold.hpp).
  KOKKOS_INLINE_FUNCTION bool extends() const { return padding == Padding::Reflect || padding == Padding::Replicate; }

  KOKKOS_INLINE_FUNCTION int images() const { return n * c; }  // number of (n, c) slices
  std::size_t input_size() const { return std::size_t(images()) * d * h * w; }
  std::size_t map_size() const { return std::size_t(images()) * od * oh * ow; }
  std::size_t map_size_per_image() const { return std::size_t(od) * oh * ow; }
  // Planes after the row pass (along W): (NC, D, H, Wo), rows row_pitch elements apart.
  std::size_t row_plane_size() const { return std::size_t(images()) * d * h * row_pitch; }
  // The map of an image with rows row_pitch elements apart: (NC, Ho, Wo) in (NC, Ho, row_pitch).
  std::size_t padded_map_size() const { return std::size_t(images()) * oh * row_pitch; }
  // Planes after the column pass of a volume (along H): (NC, D, Ho, Wo).
  std::size_t column_plane_size() const { return std::size_t(images()) * d * oh * ow; }
};

// Map extent of one axis of length n for a window w.
inline int map_extent(int n, int window, Padding p) { return p == Padding::Valid ? n - window + 1 : n; }

inline std::string shape_string(const int* e, int rank) {
  std::ostringstream s;
  s << "(";
  for (int i = 0; i < rank; ++i) s << (i ? ", " : "") << e[i];
  s << ")";
  return s.str();
}

// Builds the geometry from the extents of a rank-4 (N, C, H, W) or rank-5 (N, C, D, H, W) image and
// validates it against the options. Throws std::invalid_argument with the extents on a mismatch.
template <int Rank>
Geometry make_geometry(const std::array<int, Rank>& e, const Options& opts) {
  static_assert(Rank == 4 || Rank == 5, "kssim: images are rank 4 (N, C, H, W) or rank 5 (N, C, D, H, W)");
  validate(opts);
  Geometry g;
  g.volumetric = Rank == 5;
  g.n = e[0];
  g.c = e[1];
  g.d = Rank == 5 ? e[2] : 1;
  g.h = e[Rank - 2];
  g.w = e[Rank - 1];
  g.window = opts.window_size;
  g.padding = opts.padding;
  g.pad_w = g.pad_h = g.pad_d = opts.padding == Padding::Valid ? 0 : opts.window_size / 2;
  g.row_pitch = g.ow;
  for (int i = 0; i < Rank; ++i) {
    if (e[i] <= 0)
      throw std::invalid_argument("kssim: images must not be empty, got extents " + shape_string(e.data(), Rank));
  }
  if (opts.padding == Padding::Reflect) {
    const bool too_small = g.h <= g.window / 2 || g.w <= g.window / 2 || (g.volumetric && g.d <= g.window / 2);
    if (too_small) {
      std::ostringstream s;
      s << "kssim: with reflect padding every spatial extent must be > window_size / 2 = " << g.window / 2
        << " (a mirror image reaches that far), got image extents " << shape_string(e.data(), Rank);
      throw std::invalid_argument(s.str());
    }
  }
  if (opts.padding == Padding::Valid) {
    const bool too_small = g.h < g.window || g.w < g.window || (g.volumetric && g.d < g.window);
    if (too_small) {
      std::ostringstream s;
      s << "kssim: with valid padding every spatial extent must be >= window_size " << g.window
        << ", got image extents " << shape_string(e.data(), Rank);
      throw std::invalid_argument(s.str());
    }
  }
  g.od = g.volumetric ? map_extent(g.d, g.window, opts.padding) : 1;
  g.oh = map_extent(g.h, g.window, opts.padding);
  g.ow = map_extent(g.w, g.window, opts.padding);
  // No limit on the size here: a Plan takes at most 2^30 elements (its kernels' flat indices are ints),
  // and SSIM splits larger problems into pieces that fit (Slabs.hpp).
  return g;
}

}  // namespace kssim::impl
