// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The backends the test programs instantiate their tests and kernels for: every enabled one, except with
// KSSIM_TEST_DEVICE_ONLY the host backends where CUDA or HIP is enabled (GPU builds of the tests, which would
// compile with nvcc, for the host, what CI already runs there: perf_tests/gpu/run).

#include <Kokkos_Core.hpp>

#if defined(KSSIM_TEST_DEVICE_ONLY) && (defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP))
#define KSSIM_TEST_HOST_BACKENDS 0
#else
#define KSSIM_TEST_HOST_BACKENDS 1
#endif

#if KSSIM_TEST_HOST_BACKENDS && defined(KOKKOS_ENABLE_SERIAL)
#define KSSIM_TEST_WITH_SERIAL 1
#else
#define KSSIM_TEST_WITH_SERIAL 0
#endif

#if KSSIM_TEST_HOST_BACKENDS && defined(KOKKOS_ENABLE_OPENMP)
#define KSSIM_TEST_WITH_OPENMP 1
#else
#define KSSIM_TEST_WITH_OPENMP 0
#endif
