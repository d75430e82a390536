// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An image View of a rank kssim does not take (a row of pixels).
// expect: kssim: images must be rank 2
#include <kssim/kssim.hpp>

double f(const Kokkos::View<float*>& a, const Kokkos::View<float*>& b) {
  return kssim::ssim(Kokkos::DefaultExecutionSpace{}, a, b);
}
