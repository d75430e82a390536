// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Division in the map formula (MapFormula.hpp, MapTerms.hpp). In float on NVIDIA and AMD GPUs the IEEE
// division or reciprocal is a ~11-instruction sequence (approximate reciprocal, Newton steps, a range check
// and a branch to a slow path): 11 instructions per output pixel of the fused forward's ~315 (sm_90, ncu,
// perf_tests/README.md, "Where the time goes"), two such reciprocals per pixel with partial derivatives.
// There the hardware's reciprocal is used as it is (NVIDIA's rcp.approx.f32: within 1 ulp over the whole
// range, subnormals, 0 and infinity included; AMD's v_rcp_f32: 1 ulp), so a quotient is within ~2 ulp
// (2.4e-7 relative, inside the 1e-6 the float tests allow against float64); the callers keep their exact
// guarantees by comparison (exactly 1 when the numerator equals the denominator, never above 1:
// capped_quotient). Hosts, double and other backends divide as before, bit for bit.

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace kssim::impl {

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
inline constexpr bool gpu_device_pass = true;  // this compilation pass makes NVIDIA or AMD device code
#else
inline constexpr bool gpu_device_pass = false;
#endif

template <class T>
inline constexpr bool approximate_map_division = gpu_device_pass && std::is_same_v<T, float>;

// 1 / x: the hardware's reciprocal where approximate_map_division, else correctly rounded.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T map_reciprocal(T x) {
  if constexpr (approximate_map_division<T>) {
#if defined(__CUDA_ARCH__)
    float r;
    asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#elif defined(__HIP_DEVICE_COMPILE__)
    return __builtin_amdgcn_rcpf(x);
#endif
  }
  return T(1) / x;
}

}  // namespace kssim::impl
