// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The per-pixel quantity a map pass evaluates from the window's moments, with its partial derivatives:
//   SsimTerm               the SSIM map (MapFormula.hpp): luminance x contrast-structure
//   ContrastStructureTerm  the contrast-structure term alone, cs = (2 cov + C2) / (vs + C2), which MS-SSIM
//                          averages at every scale but the last (Wang, Simoncelli, Bovik 2003)
//   RawWindowTerm<Term>    Term of the raw window's moments (Window::Float32, RawWindow.hpp), for SSIM and for
//                          MS-SSIM's cs (pytorch-msssim takes every scale's moments of its float32 window):
//                          its own kernel instances, so that Window::Exact's kernels are compiled as if it did
//                          not exist
// A term is a type with static functions only, so choosing one changes no kernel functor's layout.
//
// cs keeps SSIM's guarantees: the numerator is capped at the denominator (where rounding pushed a
// covariance past the variances), so cs <= 1, and identical images (vs == 2 cov bit for bit,
// LocalMoments.hpp) give exactly 1. Its partials use MapAndPartials' convention: d/d e11 (= d/d e22),
// d/d e12, and d/d m1, d/d m2 with the raw second moments held fixed; cs does not depend on the means
// directly, only through v1 = e11 - m1^2, v2 = e22 - m2^2 and cov = e12 - m1 m2.

#include <kssim/impl/stages/MapFormula.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

struct SsimTerm {
  static constexpr const char* kernel_name = "kssim::column_blur_map";
  static constexpr const char* raw_window_kernel_name = "kssim::column_blur_map_float32_window";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T value(T m1, T m2, T vs, T cov, T s1, T s2, T c1, T c2) {
    return ssim_map_value(m1, m2, vs, cov, s1, s2, c1, c2);
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static MapAndPartials<T> value_and_partials(T m1, T m2, T vs, T cov, T s1, T s2, T c1,
                                                                          T c2) {
    return ssim_map_and_partials(m1, m2, vs, cov, s1, s2, c1, c2);
  }
};

struct ContrastStructureTerm {
  static constexpr const char* kernel_name = "kssim::column_blur_cs";
  static constexpr const char* raw_window_kernel_name = "kssim::column_blur_cs_float32_window";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T value(T, T, T vs, T cov, T, T, T, T c2) {
    const T b2 = vs + c2, contrast = 2 * cov + c2;
    const T a2 = contrast > b2 ? b2 : contrast;  // a select, not fmin: NaN must pass through
    if constexpr (approximate_map_division<T>)  // FastDivision.hpp
      return capped_quotient(a2 >= b2, a2 * map_reciprocal(b2));
    else
      return a2 / b2;  // correctly rounded: <= 1, exactly 1 when equal
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static MapAndPartials<T> value_and_partials(T m1, T m2, T vs, T cov, T, T, T,
                                                                          T c2) {
    const T b2 = vs + c2, contrast = 2 * cov + c2;
    const T a2 = contrast > b2 ? b2 : contrast;
    const T inv_b2 = map_reciprocal(b2);
    MapAndPartials<T> r;
    const T map = capped_quotient(a2 >= b2, a2 * inv_b2);  // what the derivatives use; NaN passes through
    // The map returned is value()'s, bit for bit (the same mean with and without partials).
    if constexpr (approximate_map_division<T>)
      r.map = map;
    else
      r.map = a2 / b2;
    r.d_var = -map * inv_b2;
    r.d_cov = 2 * inv_b2;
    r.d_m1 = -2 * m1 * r.d_var - m2 * r.d_cov;
    r.d_m2 = -2 * m2 * r.d_var - m1 * r.d_cov;
    return r;
  }
};

template <class Term>
struct RawWindowTerm {
  using base = Term;
  static constexpr const char* kernel_name = Term::raw_window_kernel_name;
};
template <class Term>
inline constexpr bool is_raw_window_term_v = false;
template <class Term>
inline constexpr bool is_raw_window_term_v<RawWindowTerm<Term>> = true;

}  // namespace kssim::impl
