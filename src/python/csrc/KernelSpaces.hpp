#pragma once
// The execution spaces the binding runs kssim on: the default host space for CPU tensors, Kokkos::Cuda for
// CUDA tensors when Kokkos has it. Their kernels are compiled once per (space, value type), in
// KernelInstances_float.cpp and KernelInstances_double.cpp (two translation units that build in parallel).

#include <kssim/Instantiate.hpp>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#define KSSIM_TORCH_CUDA_SPACE(MACRO, T) MACRO(Kokkos::Cuda, T)
#else
#define KSSIM_TORCH_CUDA_SPACE(MACRO, T)
#endif
// MACRO(ExecSpace, T) for every space the binding uses.
#define KSSIM_TORCH_EVERY_SPACE(MACRO, T) \
  MACRO(Kokkos::DefaultHostExecutionSpace, T) KSSIM_TORCH_CUDA_SPACE(MACRO, T)

KSSIM_TORCH_EVERY_SPACE(KSSIM_EXTERN_INSTANTIATION, float)
KSSIM_TORCH_EVERY_SPACE(KSSIM_EXTERN_INSTANTIATION, double)
