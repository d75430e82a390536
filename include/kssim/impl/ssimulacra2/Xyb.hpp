#pragma once
// Stage 2: linear RGB planes -> positive XYB planes (opsin absorbance with bias, clamped at 0, cube root
// minus the bias' cube root, X = (L - M) / 2, Y = (L + M) / 2, B = S, then the offsets of Constants.hpp).
// Pointwise: a RangePolicy over pixels.

#include <kssim/impl/ssimulacra2/Constants.hpp>
#include <kssim/impl/ssimulacra2/Planes.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace kssim::impl::s2 {

KOKKOS_INLINE_FUNCTION void linear_to_positive_xyb(float r, float g, float b, float& x, float& y, float& z) {
  using O = Opsin;
  using P = PositiveXyb;
  const float bias_cbrt = Kokkos::cbrt(O::bias);
  // Fused multiply-adds in the reference tool's order.
  const float l = Kokkos::fmax(Kokkos::fma(O::m00, r, Kokkos::fma(O::m01, g, Kokkos::fma(O::m02, b, O::bias))), 0.0f);
  const float m = Kokkos::fmax(Kokkos::fma(O::m10, r, Kokkos::fma(O::m11, g, Kokkos::fma(O::m12, b, O::bias))), 0.0f);
  const float s = Kokkos::fmax(Kokkos::fma(O::m20, r, Kokkos::fma(O::m21, g, Kokkos::fma(O::m22, b, O::bias))), 0.0f);
  const float lc = Kokkos::cbrt(l) - bias_cbrt, mc = Kokkos::cbrt(m) - bias_cbrt, sc = Kokkos::cbrt(s) - bias_cbrt;
  const float xx = 0.5f * (lc - mc), yy = 0.5f * (lc + mc);
  x = float(double(xx) * P::x_scale) + P::x_offset;  // not fused, as in the tool
  y = yy + P::y_offset;
  z = (sc - yy) + P::b_offset;
}

struct XybFunctor {
  const float* in;  // (n * 3) linear planes of hw pixels
  float* out;       // (n * 3) XYB planes, may not alias `in`
  std::int64_t hw;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t n = i / hw, r = i % hw;
    const float* p = in + n * 3 * hw + r;
    float* q = out + n * 3 * hw + r;
    linear_to_positive_xyb(p[0], p[hw], p[2 * hw], q[0], q[hw], q[2 * hw]);
  }
};

template <class ExecSpace>
void to_xyb(const ExecSpace& exec, const float* linear, int n, PlaneShape s, float* xyb) {
  const std::int64_t hw = std::int64_t(s.size());
  Kokkos::parallel_for("kssim::ssimulacra2::xyb",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n * hw),
                       XybFunctor{linear, xyb, hw});
}

}  // namespace kssim::impl::s2
