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
