// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The fused SSIM kernels of float images (forward with and without partials, backward of one and both
// images), masked SSIM's fused forwards and the fused loss's, for Kokkos::DefaultExecutionSpace: what spills.sh
// compiles for sm_90 to read ptxas' registers and spills per kernel. Compiled only, never linked or run.
#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>

using Exec = Kokkos::DefaultExecutionSpace;
using Image = Kokkos::View<float****, Kokkos::LayoutRight, Exec::memory_space>;

volatile double sink = 0;

void instantiate(const Exec& exec) {
  Image a, b, g1, g2;
  sink = kssim::ssim(exec, a, b);
  sink = kssim::ssim_grad(exec, a, b, g1);
  sink = kssim::ssim_grad(exec, a, b, g1, g2);
  sink = kssim::masked_ssim(exec, a, b, g2, kssim::MaskMode::Weights);  // the weighted fused forward
  sink = kssim::masked_ssim_grad(exec, a, b, g2, kssim::MaskMode::Weights, g1);
  sink = kssim::masked_ssim(exec, a, b, g2, kssim::MaskMode::Normalized);  // the fused normalized forward
  sink = kssim::l1_ssim_loss_grad(exec, a, b, g1, g2);  // the fused loss's forward (its L1 sums)
}
