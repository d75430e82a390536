// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Stage 5: the three error maps of a distorted image at one scale, consumed where the vertical blur
// produces its statistics (the blurred planes of the distorted image are never stored):
//   SSIM': 1 - ((1 - (mu1 - mu2)^2) * (2 (s12 - mu1 mu2) + C2) / ((s11 - mu1^2) + (s22 - mu2^2) + C2)),
//          clamped at 0 (no luminance denominator: the values are already perceptual);
//   d = (1 + |x2 - mu2|) / (1 + |x1 - mu1|) - 1: artifact = max(d, 0) (edges the reference lacks),
//          detail loss = max(-d, 0) (edges the distorted image lost).
// Each map's sum and sum of fourth powers accumulate per line (column) in double, in row order; the
// column sums are reduced in column order later (Features.hpp): no floating-point atomics, so the result
// is the same at every run on a given backend and launch shape.
// (Functors hold raw pointers and PODs only: see Planes.hpp.)

#include <kssim/impl/ssimulacra2/Constants.hpp>
#include <kssim/impl/ssimulacra2/RecursiveBlur.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl::s2 {

struct ErrorTerms {
  double ssim, artifact, detail;
};

// Float where the reference tool computes in float, double where it computes in double.
KOKKOS_FORCEINLINE_FUNCTION ErrorTerms error_terms(float mu1, float mu2, float s11, float s22, float s12, float x1,
                                              float x2) {
  const float mu11 = mulf(mu1, mu1), mu22 = mulf(mu2, mu2), mu12 = mulf(mu1, mu2);
  const float dm = mu1 - mu2;
  const float num_m = float(1.0 - double(dm * dm));
  const float num_s = 2.0f * (s12 - mu12) + ssim_c2;
  const float den_s = (s11 - mu11) + (s22 - mu22) + ssim_c2;
  double d = 1.0 - double(num_m * num_s / den_s);
  d = d > 0.0 ? d : 0.0;
  const double e = (1.0 + double(Kokkos::fabs(x2 - mu2))) / (1.0 + double(Kokkos::fabs(x1 - mu1))) - 1.0;
  return {d, e > 0.0 ? e : 0.0, e < 0.0 ? -e : 0.0};
}

KOKKOS_FORCEINLINE_FUNCTION double fourth(double v) {
  v *= v;
  return v * v;
}

// Consumes (mu2, s22, s12) of the vertical pass. The reference's planes are indexed by channel only.
struct ErrorSink {
  static constexpr int acc_per_line = num_stats;
  const float* mu1;   // 3 reference planes
  const float* s11;   // 3 reference planes
  const float* x1;    // 3 reference XYB planes
  const float* x2;    // (n * 3) distorted XYB planes
  double* col_sums;   // (n * 3, num_stats, across): per plane, statistic and column
  struct Bound {
    const float *mu1, *s11, *x1, *x2;
    double* col_sums;
  };
  KOKKOS_INLINE_FUNCTION Bound bind(const AxisGeometry& g, int p) const {
    const std::int64_t r = (p % 3) * g.plane;
    return {mu1 + r, s11 + r, x1 + r, x2 + p * g.plane, col_sums + std::int64_t(p) * num_stats * g.across};
  }
  KOKKOS_FORCEINLINE_FUNCTION static void init(double* acc, int strip, int jj) {
    for (int t = 0; t < num_stats; ++t) acc[t * strip + jj] = 0.0;
  }
  KOKKOS_FORCEINLINE_FUNCTION static void put(const Bound& b, std::int64_t e, const float (&v)[3], double* acc,
                                              int strip, int jj) {
    const ErrorTerms t = error_terms(b.mu1[e], v[0], b.s11[e], v[1], v[2], b.x1[e], b.x2[e]);
    acc[0 * strip + jj] += t.ssim;
    acc[1 * strip + jj] += fourth(t.ssim);
    acc[2 * strip + jj] += t.artifact;
    acc[3 * strip + jj] += fourth(t.artifact);
    acc[4 * strip + jj] += t.detail;
    acc[5 * strip + jj] += fourth(t.detail);
  }
  KOKKOS_FORCEINLINE_FUNCTION static void finish(const Bound& b, const AxisGeometry& g, int j, const double* acc,
                                                 int strip, int jj) {
    for (int t = 0; t < num_stats; ++t) b.col_sums[std::int64_t(t) * g.across + j] = acc[t * strip + jj];
  }
};

}  // namespace kssim::impl::s2
