// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// MS-SSIM from the scales' means, per (n, c) slice: t_k is the mean contrast-structure term of scale k
// (the mean SSIM at the last scale), clamped at 0 (pytorch-msssim's ReLU), and
//   MS-SSIM = prod_k max(t_k, 0)^w_k,   d MS-SSIM / d t_k = w_k MS-SSIM / t_k where t_k > 0, else 0:
// the clamp's gradient is 0 where it clamps, and a clamped factor makes the product (and with it every
// other factor's gradient) 0. NaN passes through both. One thread per slice; the mean over slices is summed
// in a fixed order by sum_map (Reduction.hpp), so the result is bitwise reproducible.

#include <kssim/MSSSIMOptions.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/stages/Reduction.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// Only pointers and PODs (KernelArrays.hpp).
struct MsSsimProduct {
  const double* scale_sums[max_ms_ssim_scales] = {};  // per scale: the sum of its map over each slice
  double map_pixels[max_ms_ssim_scales] = {};         // per scale: map pixels per slice
  double weights[max_ms_ssim_scales] = {};
  int scales = 0;
  int images = 0;                // (n, c) slices
  double* per_slice = nullptr;   // (images): MS-SSIM of each slice
  double* factors = nullptr;     // (scales, images): d MS-SSIM(slice) / d t_k
  double* tile_sums = nullptr;   // (images): the MapSums that average the slices

  KOKKOS_FUNCTION void operator()(int nc) const {
    double t[max_ms_ssim_scales];
    double product = 1;
    for (int k = 0; k < scales; ++k) {
      t[k] = scale_sums[k][nc] / map_pixels[k];
      product *= Kokkos::pow(t[k] < 0 ? 0.0 : t[k], weights[k]);  // NaN passes the clamp
    }
    per_slice[nc] = product;
    tile_sums[nc] = product;
    for (int k = 0; k < scales; ++k) factors[k * images + nc] = t[k] <= 0 ? 0.0 : weights[k] * product / t[k];
  }
};

template <class ExecSpace>
void ms_ssim_product(const ExecSpace& exec, const MsSsimProduct& k, const MapSums& mean) {
  launch("kssim::ms_ssim_product", Kokkos::RangePolicy<ExecSpace>(exec, 0, k.images), k);
  sum_map(exec, mean);
}

}  // namespace kssim::impl
