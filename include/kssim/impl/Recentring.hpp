#pragma once
// Per-slice recentring shifts. SSIM needs variances E[x^2] - E[x]^2; in finite precision that cancels
// catastrophically when the local mean is large against the local spread (near-constant images far from
// zero, data offsets). All statistics are therefore taken of x - s1 and y - s2, where s1, s2 are one
// sample of each (n, c) slice (its centre pixel): any sample of a near-constant slice is close to its
// mean, and for other images the shift stays within the data's range. The result is mathematically
// independent of the shift, so gradients treat it as a constant. A non-finite sample gives shift 0.

#include <kssim/impl/Geometry.hpp>
#include <kssim/impl/Views.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace, class T>
void compute_shifts(const ExecSpace& exec, const Geometry& g, const InputView<T, typename ExecSpace::memory_space>& x,
                    const InputView<T, typename ExecSpace::memory_space>& y,
                    const Kokkos::View<T* [2], typename ExecSpace::memory_space>& shifts) {
  const int cd = g.d / 2, ch = g.h / 2, cw = g.w / 2, channels = g.c;
  Kokkos::parallel_for(
      "kssim::recentring_shifts", Kokkos::RangePolicy<ExecSpace>(exec, 0, g.images()), KOKKOS_LAMBDA(int nc) {
        const int n = nc / channels, c = nc % channels;
        const T a = x(n, c, cd, ch, cw), b = y(n, c, cd, ch, cw);
        shifts(nc, 0) = Kokkos::isfinite(a) ? a : T(0);
        shifts(nc, 1) = Kokkos::isfinite(b) ? b : T(0);
      });
}

}  // namespace kssim::impl
