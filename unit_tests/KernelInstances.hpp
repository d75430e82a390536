// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The test programs compile kssim's kernels once per (backend, value type), in KernelInstances_float.cpp
// and KernelInstances_double.cpp (kssim/Instantiate.hpp), instead of once in every test source: with a GPU
// compiler that is minutes per build.

#include <kssim/kssim.hpp>

#include "TestBackends.hpp"

// MACRO(ExecSpace, T) for every backend the tests run (TestBackends.hpp).
#if KSSIM_TEST_WITH_SERIAL
#define KSSIM_TEST_SERIAL(MACRO, T) MACRO(Kokkos::Serial, T)
#else
#define KSSIM_TEST_SERIAL(MACRO, T)
#endif
#if KSSIM_TEST_WITH_OPENMP
#define KSSIM_TEST_OPENMP(MACRO, T) MACRO(Kokkos::OpenMP, T)
#else
#define KSSIM_TEST_OPENMP(MACRO, T)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#define KSSIM_TEST_CUDA(MACRO, T) MACRO(Kokkos::Cuda, T)
#else
#define KSSIM_TEST_CUDA(MACRO, T)
#endif
#if defined(KOKKOS_ENABLE_HIP)
#define KSSIM_TEST_HIP(MACRO, T) MACRO(Kokkos::HIP, T)
#else
#define KSSIM_TEST_HIP(MACRO, T)
#endif
#define KSSIM_TEST_EVERY_BACKEND(MACRO, T) \
  KSSIM_TEST_SERIAL(MACRO, T) KSSIM_TEST_OPENMP(MACRO, T) KSSIM_TEST_CUDA(MACRO, T) KSSIM_TEST_HIP(MACRO, T)

KSSIM_TEST_EVERY_BACKEND(KSSIM_EXTERN_INSTANTIATION, float)
KSSIM_TEST_EVERY_BACKEND(KSSIM_EXTERN_INSTANTIATION, double)
