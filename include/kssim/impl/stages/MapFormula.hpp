// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// SSIM at one pixel from the window's moments, and its partial derivatives.
//
// Moments are of recentred images x' = x - s1, y' = y - s2 (Recentring.hpp, LocalMoments.hpp): means
// m1 = B(x'), m2 = B(y'), the variance sum vs = v1 + v2 and the covariance cov. Variances are
// shift-invariant, means are not: mu1 = m1 + s1.
//   map = (2 mu1 mu2 + C1)(2 cov + C2) / ((mu1^2 + mu2^2 + C1)(vs + C2)) = A1 A2 / (B1 B2).
// The backward pass differentiates through the raw window sums the moments stand for,
// e11 = B(x'^2) = v1 + m1^2, e22 = B(y'^2), e12 = B(x'y') = cov + m1 m2: it needs
// d map / d(m1, m2, e11, e22, e12) with e11, e22, e12 held fixed; d/de11 == d/de22, so four numbers suffice.
//
// Identical images give exactly 1, and no pixel exceeds 1. The luminance terms are formed from the sum and
// difference of the means, 2 mu1 mu2 = (su^2 - dm^2) / 2 and mu1^2 + mu2^2 = (su^2 + dm^2) / 2: when
// mu1 == mu2 (identical images, LocalMoments.hpp) dm is exactly 0, and A1 == B1 bit for bit whatever the
// compiler contracts; otherwise A1 <= B1 (rounding is monotone). The contrast terms 2 cov + C2 and
// vs + C2 are equal when vs == 2 cov, and A2 is capped at B2 (where rounding pushed a covariance past the
// variances). So A1 A2 <= B1 B2, and a numerator equal to its denominator gives 1 exactly.
//
// The factors' multiply-adds are explicit fused operations wherever the hardware has them (fused_multiply_add):
// left to the compiler, GCC contracted them differently in the kernels with and without partial derivatives
// (x86-64 with FMA, -march=native), and a forward that wants gradients returned another mean (1e-9 apart).

#include <kssim/impl/core/FastDivision.hpp>

#include <kssim/impl/core/Vectorize.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class T>
struct MapAndPartials {
  T map;
  T d_var;   // d map / d e11 = d map / d e22
  T d_cov;   // d map / d e12
  T d_m1;    // d map / d m1
  T d_m2;    // d map / d m2
};

// a * b + c rounded once where the hardware fuses it (GPUs; hosts whose compiler defines __FP_FAST_FMA and
// __FP_FAST_FMAF, e.g. x86-64 with FMA), so that no compiler rounds the product in one kernel and not in
// another; elsewhere as written (no contraction can happen there, and std::fma would be a library call).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T fused_multiply_add(T a, T b, T c) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__) || \
    (defined(__FP_FAST_FMA) && defined(__FP_FAST_FMAF))
  return Kokkos::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// The four factors A1, A2, B1, B2 of the map.
template <class T>
struct MapFactors {
  T mu1, mu2, a1, a2, b1, b2;
  KOKKOS_FORCEINLINE_FUNCTION MapFactors(T m1, T m2, T vs, T cov, T s1, T s2, T c1, T c2)
      : mu1(m1 + s1), mu2(m2 + s2) {
    const T su = mu1 + mu2, dm = mu1 - mu2;
    const T dm2 = dm * dm;  // only ever an addend below: nothing to contract it with
    a1 = fused_multiply_add(T(0.5), fused_multiply_add(su, su, -dm2), c1);
    b1 = fused_multiply_add(T(0.5), fused_multiply_add(su, su, dm2), c1);
    b2 = vs + c2;
    const T contrast = fused_multiply_add(T(2), cov, c2);
    a2 = contrast > b2 ? b2 : contrast;  // a select, not fmin: NaN must pass through
  }
};

// 1 where the numerator reached the denominator (reached) or the rounded quotient passed 1, else the
// quotient; NaN passes through. Both comparisons are evaluated unconditionally (`|`, not `||` or a nested
// ?:): an ordered comparison may raise an FP exception, so under GCC's default -ftrapping-math a comparison
// that only runs on one side of a branch cannot be executed for every lane, and the host loops calling
// this were not vectorised (map with partial derivatives: scalar code, 38% of fwd+bwd on 2 CPU cores). The
// select is select_value's (Vectorize.hpp) for the same reason.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T capped_quotient(bool reached, T quotient) {
  return select_value(reached | (quotient > T(1)), T(1), quotient);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T ssim_map_value(T m1, T m2, T vs, T cov, T s1, T s2, T c1, T c2) {
  const MapFactors<T> f(m1, m2, vs, cov, s1, s2, c1, c2);
  const T num = f.a1 * f.a2, den = f.b1 * f.b2;
  if constexpr (approximate_map_division<T>)  // FastDivision.hpp
    return capped_quotient(num >= den, num * map_reciprocal(den));
  else
    return num / den;  // correctly rounded: exactly 1 when equal, never above 1
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION MapAndPartials<T> ssim_map_and_partials(T m1, T m2, T vs, T cov, T s1, T s2, T c1,
                                                                     T c2) {
  const MapFactors<T> f(m1, m2, vs, cov, s1, s2, c1, c2);
  const T mu1 = f.mu1, mu2 = f.mu2, a1 = f.a1, a2 = f.a2, b1 = f.b1, b2 = f.b2;
  // Reciprocals instead of seven divisions (division is a long instruction sequence on GPUs):
  // map/a1 = a2/(b1 b2), map/a2 = a1/(b1 b2), map/b1 = map * inv_b1, map/b2 = map * inv_b2.
  const T num = a1 * a2, den = b1 * b2;
  const T inv_b1 = map_reciprocal(b1), inv_b2 = map_reciprocal(b2), inv_b12 = inv_b1 * inv_b2;
  MapAndPartials<T> r;
  // The derivatives take the map as num * inv_b12: 1 exactly where the numerator reaches the denominator, and
  // the rounded quotient capped at 1 (see the top of this file).
  const T map = capped_quotient(num >= den, num * inv_b12);
  // The map returned is ssim_map_value's, bit for bit, so that a forward with partial derivatives returns the
  // same mean as one without (PyTorch users compare fused_ssim's train=True and train=False values).
  if constexpr (approximate_map_division<T>)
    r.map = capped_quotient(num >= den, num * map_reciprocal(den));
  else
    r.map = num / den;
  // Derivatives with respect to (mu1, mu2, v1 = v2, cov) ...
  const T d_mu1 = 2 * (mu2 * a2 * inv_b12 - mu1 * map * inv_b1);
  const T d_mu2 = 2 * (mu1 * a2 * inv_b12 - mu2 * map * inv_b1);
  r.d_var = -map * inv_b2;
  r.d_cov = 2 * a1 * inv_b12;
  // ... then to the raw sums: with e11, e22, e12 fixed, m1 enters mu1, v1 = e11 - m1^2 and cov = e12 - m1 m2.
  r.d_m1 = d_mu1 - 2 * m1 * r.d_var - m2 * r.d_cov;
  r.d_m2 = d_mu2 - 2 * m2 * r.d_var - m1 * r.d_cov;
  return r;
}

}  // namespace kssim::impl
