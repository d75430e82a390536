#pragma once
// Stage 2: linear RGB planes -> positive XYB planes (opsin absorbance with bias by fused multiply-adds,
// clamped at 0, cube root minus the bias' cube root, X = (L - M) / 2, Y = (L + M) / 2, B = S, then the offsets of Constants.hpp).
// Pointwise: a team per row (Planes.hpp).

#include <kssim/impl/ssimulacra2/Constants.hpp>
#include <kssim/impl/ssimulacra2/Planes.hpp>
#include <kssim/impl/ssimulacra2/RecursiveBlur.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>

namespace kssim::impl::s2 {

// cbrt(v) + add for v >= 0 as libjxl computes it (a bit-level first guess of v^(-1/3), four Newton steps,
// then v * r^2; within 6 ulp of the cube root): the same rounding as the reference tool, not cbrtf's.
KOKKOS_INLINE_FUNCTION float cube_root_plus(float v, float add) {
  const std::int32_t bits = Kokkos::bit_cast<std::int32_t>(v);
  // The exponent times -1/3 (0x54800000 = bits of 1 plus a third of 1's exponent; 0x002AAAAA = 1/3 << 23).
  float r = Kokkos::bit_cast<float>(bits == 0 ? 0 : std::int32_t(0x54800000) - (bits >> 23) * std::int32_t(0x002AAAAA));
  const float v3 = v * (1.0f / 3);
  for (int i = 0; i < 3; ++i) {
    const float r2 = r * r;
    r = Kokkos::fma(-v3, r2 * r2, (4.0f / 3) * r);
  }
  float r2 = r * r;
  r = Kokkos::fma(1.0f / 3, Kokkos::fma(-v, r2 * r2, r), r);
  r2 = r * r;
  return Kokkos::fma(r2, v, add);
}

// neg_bias_cbrt: -cbrtf(Opsin::bias), computed on the host (device cbrtf may round differently).
KOKKOS_INLINE_FUNCTION void linear_to_positive_xyb(float r, float g, float b, float neg_bias_cbrt, float& x, float& y,
                                                   float& z) {
  using O = Opsin;
  using P = PositiveXyb;
  // Fused multiply-adds in the reference tool's order.
  const float l = Kokkos::fmax(Kokkos::fma(O::m00, r, Kokkos::fma(O::m01, g, Kokkos::fma(O::m02, b, O::bias))), 0.0f);
  const float m = Kokkos::fmax(Kokkos::fma(O::m10, r, Kokkos::fma(O::m11, g, Kokkos::fma(O::m12, b, O::bias))), 0.0f);
  const float s = Kokkos::fmax(Kokkos::fma(O::m20, r, Kokkos::fma(O::m21, g, Kokkos::fma(O::m22, b, O::bias))), 0.0f);
  const float lc = cube_root_plus(l, neg_bias_cbrt), mc = cube_root_plus(m, neg_bias_cbrt),
              sc = cube_root_plus(s, neg_bias_cbrt);
  const float xx = 0.5f * (lc - mc), yy = 0.5f * (lc + mc);
  x = mulf(xx, P::x_scale) + P::x_offset;  // not fused, as in the tool
  y = yy + P::y_offset;
  z = (sc - yy) + P::b_offset;
}

struct XybFunctor {
  const float* in;  // (n * 3) linear planes of hw pixels
  float* out;       // (n * 3) XYB planes, may not alias `in`
  int h, w;
  float neg_bias_cbrt;
  KOKKOS_INLINE_FUNCTION void operator()(int row, int x) const {
    const std::int64_t hw = std::int64_t(h) * w;
    const int n = row / h;
    const std::int64_t r = std::int64_t(row % h) * w + x;
    const float* p = in + n * 3 * hw + r;
    float* q = out + n * 3 * hw + r;
    linear_to_positive_xyb(p[0], p[hw], p[2 * hw], neg_bias_cbrt, q[0], q[hw], q[2 * hw]);
  }
};

template <class ExecSpace>
void to_xyb(const ExecSpace& exec, const float* linear, int n, PlaneShape s, float* xyb) {
  for_each_row(exec, "kssim::ssimulacra2::xyb", n * s.h, s.w, XybFunctor{linear, xyb, s.h, s.w, -std::cbrt(Opsin::bias)});
}

}  // namespace kssim::impl::s2
