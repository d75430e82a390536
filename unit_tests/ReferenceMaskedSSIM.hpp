// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// An independent float64 masked-SSIM reference for the tests, written from the definition: direct
// (non-separable) window sums; with normalized statistics every sample weighs k m / sum k m and samples of
// mask 0 (and positions outside the image) are skipped outright; the mean weighs each map pixel by the mask
// at its window's centre; the analytic gradient per map pixel in terms of (mu, sigma). It shares no code
// with the library's kernels.

#include "ReferenceSSIM.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace kssim_test {

struct MaskedReference {
  Shape map_shape;
  std::vector<double> map;                      // unweighted; 0 for normalized windows without valid pixels
  double mean = 0;                              // sum w map / sum w
  std::vector<double> per_image, per_channel;   // the same over each image / slice
  std::vector<double> grad1, grad2;
};

// mask: (N, mask_channels, D, H, W), mask_channels 1 (every channel) or C.
MaskedReference reference_masked_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                             const std::vector<double>& mask, int mask_channels,
                                             const ReferenceOptions& o, bool normalized, bool with_gradients);

}  // namespace kssim_test
