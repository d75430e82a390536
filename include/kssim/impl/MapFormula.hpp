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

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T ssim_map_value(T m1, T m2, T vs, T cov, T s1, T s2, T c1, T c2) {
  const T mu1 = m1 + s1, mu2 = m2 + s2;
  const T a1 = 2 * mu1 * mu2 + c1;
  const T a2 = 2 * cov + c2;
  const T b1 = mu1 * mu1 + mu2 * mu2 + c1;
  const T b2 = vs + c2;
  return (a1 * a2) / (b1 * b2);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION MapAndPartials<T> ssim_map_and_partials(T m1, T m2, T vs, T cov, T s1, T s2, T c1,
                                                                     T c2) {
  const T mu1 = m1 + s1, mu2 = m2 + s2;
  const T a1 = 2 * mu1 * mu2 + c1;
  const T a2 = 2 * cov + c2;
  const T b1 = mu1 * mu1 + mu2 * mu2 + c1;
  const T b2 = vs + c2;
  // Two reciprocals instead of seven divisions (division is a long instruction sequence on GPUs):
  // map/a1 = a2/(b1 b2), map/a2 = a1/(b1 b2), map/b1 = map * inv_b1, map/b2 = map * inv_b2.
  const T inv_b1 = 1 / b1, inv_b2 = 1 / b2, inv_b12 = inv_b1 * inv_b2;
  MapAndPartials<T> r;
  r.map = a1 * a2 * inv_b12;
  // Derivatives with respect to (mu1, mu2, v1 = v2, cov) ...
  const T d_mu1 = 2 * (mu2 * a2 * inv_b12 - mu1 * r.map * inv_b1);
  const T d_mu2 = 2 * (mu1 * a2 * inv_b12 - mu2 * r.map * inv_b1);
  r.d_var = -r.map * inv_b2;
  r.d_cov = 2 * a1 * inv_b12;
  // ... then to the raw sums: with e11, e22, e12 fixed, m1 enters mu1, v1 = e11 - m1^2 and cov = e12 - m1 m2.
  r.d_m1 = d_mu1 - 2 * m1 * r.d_var - m2 * r.d_cov;
  r.d_m2 = d_mu2 - 2 * m2 * r.d_var - m1 * r.d_cov;
  return r;
}

}  // namespace kssim::impl
