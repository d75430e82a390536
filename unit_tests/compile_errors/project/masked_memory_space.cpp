// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Masked SSIM with a memory space first.
// expect: kssim: the first argument must be a Kokkos execution space
#include <kssim/kssim.hpp>

double f(const Kokkos::View<float****, Kokkos::HostSpace>& a, const Kokkos::View<float****, Kokkos::HostSpace>& m) {
  return kssim::masked_ssim(Kokkos::HostSpace{}, a, a, m, kssim::MaskMode::Weights);
}
