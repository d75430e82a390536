#pragma once
// The backends the test programs instantiate their tests and kernels for: every enabled one, except
//   KSSIM_TEST_SKIP_SERIAL  Serial where OpenMP is enabled: the gpu_paths program and the sanitizer build,
//                           where OpenMP's teams run the same code as Serial's plus the multi-thread paths
//                           (the default unit-test program still runs both);
//   KSSIM_TEST_DEVICE_ONLY  the host backends where CUDA or HIP is enabled: GPU builds of the tests, which
//                           compile for the device what CI already runs on the host.
// Each test source compiles its typed tests once per backend (about 20 s per backend and test source on a
// CI core), so these halve the builds that use them.

#include <Kokkos_Core.hpp>

#if defined(KSSIM_TEST_DEVICE_ONLY) && (defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP))
#define KSSIM_TEST_HOST_BACKENDS 0
#else
#define KSSIM_TEST_HOST_BACKENDS 1
#endif

#if KSSIM_TEST_HOST_BACKENDS && defined(KOKKOS_ENABLE_SERIAL) && \
    !(defined(KSSIM_TEST_SKIP_SERIAL) && defined(KOKKOS_ENABLE_OPENMP))
#define KSSIM_TEST_WITH_SERIAL 1
#else
#define KSSIM_TEST_WITH_SERIAL 0
#endif

#if KSSIM_TEST_HOST_BACKENDS && defined(KOKKOS_ENABLE_OPENMP)
#define KSSIM_TEST_WITH_OPENMP 1
#else
#define KSSIM_TEST_WITH_OPENMP 0
#endif
