// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Kokkos-side helpers of the binding (the bridge functions ensure_kokkos / finalize_kokkos are in
// Bridge.hpp): execution space instances on PyTorch's streams.

#include <Kokkos_Core.hpp>

namespace kssim::torch_binding {

#if defined(KOKKOS_ENABLE_CUDA)
// A Kokkos::Cuda instance that launches on `stream` (a cudaStream_t of PyTorch's, not owned), created once
// per stream: an instance carries its own internal buffers, so one per call would allocate every time.
Kokkos::Cuda cuda_instance(void* stream);
#endif

}  // namespace kssim::torch_binding
