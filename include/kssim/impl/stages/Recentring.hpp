// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Per-slice recentring shifts. SSIM needs variances E[x^2] - E[x]^2; in finite precision that cancels
// catastrophically when the local mean is large against the local spread (near-constant images far from
// zero, data offsets). All statistics are therefore taken of x - s1 and y - s2, where s1, s2 are one
// finite sample of each (n, c) slice: any sample of a near-constant slice is close to its mean, and for
// other images the shift stays within the data's range. The result is mathematically independent of the
// shift, so gradients treat it as a constant.
//
// The sample is the slice's centre pixel. If that one is NaN or +-Inf, the first finite one in a fixed
// order: the neighbours of the centre in the slice's (D, H, W) row-major order, at distance 1, 2, ...,
// RecentringProbes::outward (after, then before), then RecentringProbes::spread samples spread evenly
// over the whole slice (every sample of a slice that small). So a non-finite centre costs at most
// 1 + 2 * outward + spread reads of that slice (one thread per slice, no atomics), the choice depends
// only on the slice's values (the same on every backend and layout), and only a slice none of whose
// probed samples is finite gets the shift 0.

#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Storage.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

struct RecentringProbes {
  static constexpr long long outward = 64;   // neighbours on each side of the centre, in row-major order
  static constexpr long long spread = 1024;  // then this many samples spread evenly over the slice
  static constexpr int signs = 16;            // samples spread over the slice for the straddle test
};

// The recentring sample of slice (n, c) of v, in the compute type T (Storage.hpp): see the file's comment.
template <class View, class T = typename View::non_const_value_type>
KOKKOS_INLINE_FUNCTION T recentring_sample(const View& v, const int n, const int c, const Geometry& g) {
  using I = long long;  // d * h * w and j * size below may pass 2^31
  const I hw = I(g.h) * g.w, size = I(g.d) * hw;
  const I centre = (I(g.d / 2) * g.h + g.h / 2) * g.w + g.w / 2;
  auto at = [&](const I i) -> T { return to_compute<T>(v(n, c, int(i / hw), int(i % hw / g.w), int(i % g.w))); };
  // The straddle test: samples on a scattered grid (no 64-bit divisions), independent loads issued together.
  bool negative = false, positive = false;
  constexpr int m = RecentringProbes::signs;
  for (int j = 0; j < m; ++j) {
    const auto spot = [&](const int k, const int n) { return int((2 * I(k) + 1) * n / (2 * m)); };
    const T p = to_compute<T>(v(n, c, spot(j, g.d), spot((5 * j) % m, g.h), spot((11 * j) % m, g.w)));
    negative = negative || p < T(0);  // false for NaN
    positive = positive || p > T(0);
  }
  auto shift_for = [&](const T s) { return (negative || s < T(0)) && (positive || s > T(0)) ? T(0) : s; };
  T s = to_compute<T>(v(n, c, g.d / 2, g.h / 2, g.w / 2));  // the centre
  if (Kokkos::isfinite(s)) return shift_for(s);
  for (I k = 1; k <= RecentringProbes::outward; ++k) {
    if (centre + k < size && Kokkos::isfinite(s = at(centre + k))) return shift_for(s);
    if (centre - k >= 0 && Kokkos::isfinite(s = at(centre - k))) return shift_for(s);
  }
  const I probes = size < RecentringProbes::spread ? size : RecentringProbes::spread;
  for (I j = 0; j < probes; ++j)
    if (Kokkos::isfinite(s = at(j * size / probes))) return shift_for(s);
  return T(0);
}

// shifts[2 nc] and shifts[2 nc + 1]: the shifts of slice nc of x and of y (images of S, shifts in T).
template <class ExecSpace, class T, class S>
void compute_shifts(const ExecSpace& exec, const Geometry& g, const InputArray<S>& x, const InputArray<S>& y,
                    T* shifts) {
  const int channels = g.c;
  launch("kssim::recentring_shifts", Kokkos::RangePolicy<ExecSpace>(exec, 0, 2 * g.images()), KOKKOS_LAMBDA(int k) {
    const int nc = k / 2, n = nc / channels, c = nc % channels;
    shifts[k] = recentring_sample<InputArray<S>, T>(k % 2 ? y : x, n, c, g);
  });
}

// Copies `count` shifts computed elsewhere (a slab takes its slices' shifts: Slabs.hpp).
template <class ExecSpace, class T>
void copy_shifts(const ExecSpace& exec, const T* from, T* to, int count) {
  launch("kssim::copy_shifts", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
         KOKKOS_LAMBDA(int k) { to[k] = from[k]; });
}

}  // namespace kssim::impl
