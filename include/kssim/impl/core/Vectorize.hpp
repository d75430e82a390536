// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// KSSIM_VECTORIZE before a host loop over consecutive outputs: `omp simd`. Without it GCC vectorises the
// wrong loop of a correlation (the taps, as an in-order reduction: scalar adds and shuffles) instead of
// the outputs, which made the host kernels three times slower. Empty in GPU device code, and where the
// compiler has no OpenMP SIMD support enabled (-fopenmp or -fopenmp-simd; the kssim CMake target adds the
// latter for GCC and Clang).

#if (defined(_OPENMP) || defined(KSSIM_OPENMP_SIMD)) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define KSSIM_VECTORIZE _Pragma("omp simd")
#else
#define KSSIM_VECTORIZE
#endif

// KSSIM_UNROLL before a GPU loop whose trip count is a compile-time constant: unrolled completely, so
// small arrays indexed by the loop stay in registers and window weights become constant operands.
// Empty on hosts (the vectorised loops above are the ones that matter there).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KSSIM_UNROLL _Pragma("unroll")
#else
#define KSSIM_UNROLL
#endif

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

namespace kssim::impl {

// cond ? a : b, for a and b already computed, inside host loops that must vectorise: on hosts as bit operations.
// Under GCC's default -ftrapping-math a select becomes a branch wherever the compiler moves an arm's arithmetic
// onto one side of it (partial redundancy elimination turns mu * (c ? 1 : q) into c ? mu : mu * q), and a
// multiply or division that "could trap" on one side of a branch keeps the whole loop scalar: the SSIM map with
// partial derivatives and every division of masked SSIM's passes ran one output at a time. GPUs: a select.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T select_value(bool cond, T a, T b) {
  static_assert(std::is_floating_point_v<T>);
  KOKKOS_IF_ON_DEVICE((return cond ? a : b;))
  KOKKOS_IF_ON_HOST((
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    const Bits keep = Bits(0) - Bits(cond);
    return Kokkos::bit_cast<T>((Kokkos::bit_cast<Bits>(a) & keep) | (Kokkos::bit_cast<Bits>(b) & ~keep));))
}

}  // namespace kssim::impl
