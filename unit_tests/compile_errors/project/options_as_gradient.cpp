// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Options passed where the second gradient goes.
// expect: kssim: images, maps and gradients must be Kokkos::Views
#include <kssim/kssim.hpp>

double f(const Kokkos::View<float****>& a, const Kokkos::View<float****>& b, const Kokkos::View<float****>& g) {
  kssim::Options opts;
  return kssim::ssim_grad(Kokkos::DefaultExecutionSpace{}, a, b, g, opts);
}
