// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Stage 1: the caller's (N, 3, H, W) View (any layout, through its strides) -> packed linear-RGB planes.
// sRGB input is decoded as libjxl's colour management decodes it for the reference tool: x / 12.92 up to
// 0.04045, above it a rational approximation of the sRGB curve (relative error < 5e-7 of the exact
// ((x + 0.055) / 1.055)^2.4; degree-4 polynomials by Horner with fused multiply-adds, then a division), so
// that the float rounding, to which the score is sensitive at the 1e-2 level, is the tool's. The stage test
// checks all 8- and 16-bit codes against the exact curve and against this evaluation.
// Pointwise: a team per row (Planes.hpp).

#include <kssim/impl/ssimulacra2/Planes.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace kssim::impl::s2 {

KOKKOS_FORCEINLINE_FUNCTION float srgb_to_linear(float v) {
  const float a = Kokkos::fabs(v);
  // Numerator and denominator coefficients, constant term first (published with libjxl's TF_SRGB). Both
  // branches are evaluated and one selected, so that the loop over a row vectorises.
  float yp = 8.210152774e-01f, yq = 6.521209011e-03f;
  yp = Kokkos::fma(yp, a, 7.961564959e-01f);
  yq = Kokkos::fma(yq, a, -5.512498495e-02f);
  yp = Kokkos::fma(yp, a, 1.624820318e-01f);
  yq = Kokkos::fma(yq, a, 4.987528350e-01f);
  yp = Kokkos::fma(yp, a, 1.043637593e-02f);
  yq = Kokkos::fma(yq, a, 1.076976492e+00f);
  yp = Kokkos::fma(yp, a, 2.200248328e-04f);
  yq = Kokkos::fma(yq, a, 2.631846970e-01f);
  const float m = a > 0.04045f ? yp / yq : a * (1.0f / 12.92f);
  return v < 0 ? -m : m;
}

// Strided input of extents (n, 3, h, w); strides in elements.
struct StridedInput {
  const float* data;
  std::int64_t sn, sc, sh, sw;
};

struct LinearizeFunctor {
  StridedInput in;
  float* out;  // (n * 3) planes of h x w
  int h, w;
  bool srgb;
  struct Row {
    const float* in[3];
    float* out[3];
    std::int64_t sw;
    bool srgb;
    KOKKOS_FORCEINLINE_FUNCTION void operator()(int x) const {
      for (int c = 0; c < 3; ++c) {
        const float v = in[c][x * sw];
        out[c][x] = srgb ? srgb_to_linear(v) : v;
      }
    }
    KOKKOS_INLINE_FUNCTION void run(int n) const {
      for (int c = 0; c < 3; ++c) {
        const float* KOKKOS_RESTRICT src = in[c];
        float* KOKKOS_RESTRICT dst = out[c];
        const std::int64_t s = sw;
        if (srgb && s == 1) {
          KSSIM_VECTORIZE
          for (int x = 0; x < n; ++x) dst[x] = srgb_to_linear(src[x]);
        } else if (srgb) {
          KSSIM_VECTORIZE
          for (int x = 0; x < n; ++x) dst[x] = srgb_to_linear(src[x * s]);
        } else {
          for (int x = 0; x < n; ++x) dst[x] = src[x * s];
        }
      }
    }
  };
  KOKKOS_INLINE_FUNCTION Row row(int row) const {
    const int n = row / h, y = row % h;
    const std::int64_t hw = std::int64_t(h) * w;
    Row r{};
    for (int c = 0; c < 3; ++c) {
      r.in[c] = in.data + n * in.sn + c * in.sc + y * in.sh;
      r.out[c] = out + (std::int64_t(n) * 3 + c) * hw + std::int64_t(y) * w;
    }
    r.sw = in.sw;
    r.srgb = srgb;
    return r;
  }
};

template <class ExecSpace>
void linearize(const ExecSpace& exec, const StridedInput& in, int n, int h, int w, bool srgb, float* out) {
  for_each_row(exec, "kssim::ssimulacra2::linearize", n * h, w, LinearizeFunctor{in, out, h, w, srgb});
}

// Counts of invalid input values, for the argument checks (integer counts: exact in any order).
struct InputFaults {
  std::int64_t nonfinite = 0, out_of_range = 0;
};

// A team per input row: its invalid values counted across the lanes, then added to the two totals with
// integer atomics. One row has at most 3 * w < 2^32 of each, so both counts travel in one 64-bit sum.
struct InputCheckFunctor {
  StridedInput in;
  int h, w;
  bool srgb;
  unsigned long long* totals;  // [0] non-finite, [1] outside [0, 1] (sRGB only)
  template <class Team>
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int n = team.league_rank() / h, y = team.league_rank() % h;
    const float* row = in.data + n * in.sn + y * in.sh;
    constexpr unsigned long long one_nonfinite = 1ull << 32;
    unsigned long long packed = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamVectorRange(team, w),
        [&](int x, unsigned long long& sum) {
          for (int c = 0; c < 3; ++c) {
            const float v = row[c * in.sc + x * in.sw];
            if (!Kokkos::isfinite(v))
              sum += one_nonfinite;
            else if (srgb && !(v >= 0.0f && v <= 1.0f))
              sum += 1;
          }
        },
        packed);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (packed >> 32) Kokkos::atomic_add(&totals[0], packed >> 32);
      if (packed & 0xffffffffull) Kokkos::atomic_add(&totals[1], packed & 0xffffffffull);
    });
  }
};

template <class ExecSpace>
InputFaults check_input(const ExecSpace& exec, const StridedInput& in, int n, int h, int w, bool srgb) {
  if (n <= 0 || h <= 0 || w <= 0) return {};
  using Mem = typename ExecSpace::memory_space;
  Kokkos::View<unsigned long long[2], Mem> totals(Kokkos::view_alloc(exec, "kssim::ssimulacra2::input_faults"));
  constexpr bool gpu = is_gpu_space_v<ExecSpace>;
  const InputCheckFunctor k{in, h, w, srgb, totals.data()};
  auto policy = make_team_policy(exec, n * h, gpu ? 8 : 1, gpu ? 32 : 1, 0, 0, Options{}, k, Kokkos::ParallelForTag{});
  launch("kssim::ssimulacra2::check_input", policy, k);
  unsigned long long host[2] = {};
  Kokkos::deep_copy(exec, Kokkos::View<unsigned long long[2], Kokkos::HostSpace>(host), totals);
  exec.fence("kssim::ssimulacra2: input check");
  return {std::int64_t(host[0]), std::int64_t(host[1])};
}

}  // namespace kssim::impl::s2
