// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The optional device factor a backward pass multiplies its gradients by, besides its host `scale`: the
// upstream gradient d loss / d value where the caller has it in device memory (a PyTorch autograd grad, a
// loss computed on the device). The kernel that applies it reads it where it is, as a double or as a float
// (PyTorch's float32 losses), so no kernel has to convert it first and nothing waits for the host.
// Only pointers (KernelArrays.hpp).

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

struct UpstreamFactor {
  const double* f64 = nullptr;  // at most one of the two is set; neither: the factor is 1
  const float* f32 = nullptr;
  // An optional second device factor the first is multiplied by (masked SSIM's 1 / sum of weights, which its
  // forward computed on the device): one read more in the kernels rather than a kernel forming the product.
  const double* times = nullptr;

  UpstreamFactor() = default;
  KOKKOS_INLINE_FUNCTION UpstreamFactor(std::nullptr_t) {}  // none
  KOKKOS_INLINE_FUNCTION UpstreamFactor(const double* p) : f64(p) {}
  KOKKOS_INLINE_FUNCTION UpstreamFactor(const float* p) : f32(p) {}
  // This factor times a second device factor.
  UpstreamFactor times_factor(const double* second) const {
    UpstreamFactor u = *this;
    u.times = second;
    return u;
  }
  // The factor, widened exactly to double; 1 without one. Read on the device.
  KOKKOS_INLINE_FUNCTION double value() const {
    const double first = f64 ? *f64 : f32 ? double(*f32) : 1.0;
    return times ? first * *times : first;
  }
};

}  // namespace kssim::impl
