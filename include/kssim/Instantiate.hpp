// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// kssim is header-only, so every translation unit that calls it compiles its kernels again (with a GPU
// compiler, about a minute per (execution space, value type)). A program with many translation units can
// compile them once instead (SSIM's, MS-SSIM's and masked SSIM's):
//
//   // in every translation unit that calls kssim, e.g. through a project header:
//   KSSIM_EXTERN_INSTANTIATION(Kokkos::Cuda, float)
//   // in exactly one .cpp file:
//   KSSIM_INSTANTIATE(Kokkos::Cuda, float)
//
// Both are optional; results are identical either way. Every translation unit of the program must be
// compiled with the same kssim definitions.

#include <kssim/impl/masked/MaskedPlan.hpp>
#include <kssim/impl/msssim/MsSsimPlan.hpp>
#include <kssim/impl/ssim/Plan.hpp>

#define KSSIM_EXTERN_INSTANTIATION(ExecutionSpace, T)                                              \
  extern template class kssim::impl::Plan<ExecutionSpace, T>;                                      \
  extern template class kssim::impl::Plan<ExecutionSpace, T, kssim::impl::ContrastStructureTerm>;  \
  extern template class kssim::impl::MsSsimPlan<ExecutionSpace, T>;                                \
  extern template class kssim::impl::MaskedPlan<ExecutionSpace, T>;                                \
  extern template void kssim::impl::run_self_check<ExecutionSpace, T>(const ExecutionSpace&,       \
                                                                     kssim::impl::SelfCheckFault);

// MACRO(ExecutionSpace, T) for the spaces a program runs kssim on by default: Kokkos::DefaultHostExecutionSpace
// and, where Kokkos' default space is a device (CUDA, HIP, SYCL, OpenACC, OpenMP target), that one too. E.g.
// KSSIM_EVERY_DEFAULT_SPACE(KSSIM_INSTANTIATE, float) compiles what the PyTorch binding and the benchmarks
// call (cmake/KernelInstances.cmake).
#if defined(KOKKOS_ENABLE_DEFAULT_DEVICE_TYPE_CUDA) || defined(KOKKOS_ENABLE_DEFAULT_DEVICE_TYPE_HIP) ||    \
    defined(KOKKOS_ENABLE_DEFAULT_DEVICE_TYPE_SYCL) || defined(KOKKOS_ENABLE_DEFAULT_DEVICE_TYPE_OPENACC) || \
    defined(KOKKOS_ENABLE_DEFAULT_DEVICE_TYPE_OPENMPTARGET)
#define KSSIM_IMPL_DEFAULT_DEVICE_SPACE(MACRO, T) MACRO(Kokkos::DefaultExecutionSpace, T)
#else
#define KSSIM_IMPL_DEFAULT_DEVICE_SPACE(MACRO, T)
#endif
#define KSSIM_EVERY_DEFAULT_SPACE(MACRO, T) \
  MACRO(Kokkos::DefaultHostExecutionSpace, T) KSSIM_IMPL_DEFAULT_DEVICE_SPACE(MACRO, T)

#define KSSIM_INSTANTIATE(ExecutionSpace, T)      \
  KSSIM_INSTANTIATE_SSIM(ExecutionSpace, T)       \
  KSSIM_INSTANTIATE_MS_SSIM(ExecutionSpace, T)    \
  KSSIM_INSTANTIATE_MASKED(ExecutionSpace, T)     \
  KSSIM_INSTANTIATE_SELF_CHECK(ExecutionSpace, T)

// The same in parts, for builds that spread the kernels over more translation units (several compiler
// processes at once: unit_tests/CMakeLists.txt, KSSIM_SPLIT_KERNEL_INSTANCES). Together they are
// KSSIM_INSTANTIATE.
#define KSSIM_INSTANTIATE_SSIM(ExecutionSpace, T) template class kssim::impl::Plan<ExecutionSpace, T>;
#define KSSIM_INSTANTIATE_MS_SSIM(ExecutionSpace, T)                                       \
  template class kssim::impl::Plan<ExecutionSpace, T, kssim::impl::ContrastStructureTerm>; \
  template class kssim::impl::MsSsimPlan<ExecutionSpace, T>;
#define KSSIM_INSTANTIATE_MASKED(ExecutionSpace, T) template class kssim::impl::MaskedPlan<ExecutionSpace, T>;
#define KSSIM_INSTANTIATE_SELF_CHECK(ExecutionSpace, T) \
  template void kssim::impl::run_self_check<ExecutionSpace, T>(const ExecutionSpace&, kssim::impl::SelfCheckFault);
