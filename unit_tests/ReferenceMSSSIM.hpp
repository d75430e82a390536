// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// An independent float64 MS-SSIM reference for the tests, written from the definition (pytorch-msssim's
// conventions): at every scale the direct (non-separable) window sums of the valid windows, the mean of the
// contrast-structure map (SSIM map at the last scale) per (n, c) slice, clamped at 0, the weighted product,
// the 2x2(x2) average pool with zero padding before odd extents between scales; and the analytic gradient
// of the mean, scale by scale, with the pooling's adjoint. It shares no code with the library's kernels.

#include "ReferenceSSIM.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace kssim_test {

struct MsSsimReference {
  double mean = 0;
  std::vector<double> per_slice;            // (N * C)
  std::vector<std::vector<double>> terms;   // [scale][slice]: mean cs (SSIM at the last scale), unclamped
  std::vector<double> grad1, grad2;         // d mean / d x, d mean / d y
};

// Extents after one pooling; 2D shapes keep D = 1.
inline Shape reference_pooled_shape(const Shape& s) {
  Shape p = s;
  if (s.volumetric) p.d = (s.d + 1) / 2;
  p.h = (s.h + 1) / 2;
  p.w = (s.w + 1) / 2;
  return p;
}

// out(i) = sum of the 2x2(x2) inputs 2i - pad + {0, 1} that exist, / 4 (8); pad = extent % 2 per axis.
std::vector<double> reference_pool(const Shape& s, const std::vector<double>& x);

// The adjoint of reference_pool: g_fine += d out / d x^T g_coarse, written as a scatter over the outputs.
void reference_pool_adjoint(const Shape& s, const std::vector<double>& coarse, std::vector<double>& fine);

// One scale, valid windows: the mean over each slice of the cs map (cs = true) or SSIM map into `means`;
// with `upstream` (one factor per slice), also g1 += sum_nc upstream[nc] d means[nc] / dx (g2: / dy).
void reference_scale(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                            const ReferenceOptions& o, bool cs, std::vector<double>& means,
                            const std::vector<double>* upstream, std::vector<double>* g1, std::vector<double>* g2);

MsSsimReference reference_ms_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                         const ReferenceOptions& o, const std::vector<double>& weights,
                                         bool with_gradients);

}  // namespace kssim_test
