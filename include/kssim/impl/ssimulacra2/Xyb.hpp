// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

// Bit casts: the compiler builtin in host code (Kokkos::bit_cast's memcpy kept GCC from vectorising the
// loop), Kokkos' in device code.
template <class To, class From>
KOKKOS_FORCEINLINE_FUNCTION To s2_bit_cast(const From& v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
  return Kokkos::bit_cast<To>(v);
#else
  return __builtin_bit_cast(To, v);
#endif
}

// cbrt(v) + add for v >= 0 as libjxl computes it (a bit-level first guess of v^(-1/3), four Newton steps,
// then v * r^2; within 6 ulp of the cube root): the same rounding as the reference tool, not cbrtf's.
KOKKOS_FORCEINLINE_FUNCTION float cube_root_plus(float v, float add) {
  const std::int32_t bits = s2_bit_cast<std::int32_t>(v);
  // The exponent times -1/3 (0x54800000 = bits of 1 plus a third of 1's exponent; 0x002AAAAA = 1/3 << 23).
  float r = s2_bit_cast<float>(bits == 0 ? 0 : std::int32_t(0x54800000) - (bits >> 23) * std::int32_t(0x002AAAAA));
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

// A select, not fmax: GCC does not vectorise fmaxf calls.
KOKKOS_FORCEINLINE_FUNCTION float zero_if_negative(float v) { return v < 0.0f ? 0.0f : v; }

// neg_bias_cbrt: -cbrtf(Opsin::bias), computed on the host (device cbrtf may round differently).
KOKKOS_FORCEINLINE_FUNCTION void linear_to_positive_xyb(float r, float g, float b, float neg_bias_cbrt, float& x, float& y,
                                                   float& z) {
  using O = Opsin;
  using P = PositiveXyb;
  // Fused multiply-adds in the reference tool's order.
  const float l = zero_if_negative(Kokkos::fma(O::m00, r, Kokkos::fma(O::m01, g, Kokkos::fma(O::m02, b, O::bias))));
  const float m = zero_if_negative(Kokkos::fma(O::m10, r, Kokkos::fma(O::m11, g, Kokkos::fma(O::m12, b, O::bias))));
  const float s = zero_if_negative(Kokkos::fma(O::m20, r, Kokkos::fma(O::m21, g, Kokkos::fma(O::m22, b, O::bias))));
  const float lc = cube_root_plus(l, neg_bias_cbrt), mc = cube_root_plus(m, neg_bias_cbrt),
              sc = cube_root_plus(s, neg_bias_cbrt);
  const float xx = 0.5f * (lc - mc), yy = 0.5f * (lc + mc);
  x = mulf(xx, P::x_scale) + P::x_offset;  // not fused, as in the tool
  y = yy + P::y_offset;
  z = (sc - yy) + P::b_offset;
}

struct XybFunctor {
  const float* in;  // (n * 3) linear planes of hw pixels
  float* out;       // (n * 3) XYB planes: `in` itself, or not overlapping it
  int h, w;
  float neg_bias_cbrt;
  struct Row {
    const float *r, *g, *b;
    float *x, *y, *z;
    float neg_bias_cbrt;
    KOKKOS_FORCEINLINE_FUNCTION void operator()(int i) const {
      const float ri = r[i], gi = g[i], bi = b[i];
      linear_to_positive_xyb(ri, gi, bi, neg_bias_cbrt, x[i], y[i], z[i]);
    }
    // Outputs may be the inputs (in place): every iteration reads its pixel before writing it, which is what
    // `omp simd` needs (no restrict: the pointers may alias).
    KOKKOS_INLINE_FUNCTION void run(int n) const {
      const float a = neg_bias_cbrt;
      KSSIM_VECTORIZE
      for (int i = 0; i < n; ++i) {
        const float ri = r[i], gi = g[i], bi = b[i];
        float xi, yi, zi;
        linear_to_positive_xyb(ri, gi, bi, a, xi, yi, zi);
        x[i] = xi;
        y[i] = yi;
        z[i] = zi;
      }
    }
  };
  KOKKOS_INLINE_FUNCTION Row row(int row) const {
    const std::int64_t hw = std::int64_t(h) * w;
    const std::int64_t off = (row / h) * 3 * hw + std::int64_t(row % h) * w;
    return {in + off, in + off + hw, in + off + 2 * hw, out + off, out + off + hw, out + off + 2 * hw, neg_bias_cbrt};
  }
};

template <class ExecSpace>
void to_xyb(const ExecSpace& exec, const float* linear, int n, PlaneShape s, float* xyb) {
  for_each_row(exec, "kssim::ssimulacra2::xyb", n * s.h, s.w, XybFunctor{linear, xyb, s.h, s.w, -std::cbrt(Opsin::bias)});
}

}  // namespace kssim::impl::s2
