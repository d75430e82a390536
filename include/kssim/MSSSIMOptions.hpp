// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The knobs of MS-SSIM (multi-scale SSIM, Wang, Simoncelli and Bovik 2003): the SSIM options used at every
// scale and one exponent per scale. Defaults follow pytorch-msssim: 5 scales with the weights of the paper.

#include <kssim/Options.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace kssim {

// Most scales MS-SSIM accepts (each halves the image; 8 scales need 1281 pixels for the 11-tap window).
inline constexpr int max_ms_ssim_scales = 8;

struct MSSSIMOptions {
  // window_size, sigma, k1, k2, data_range, launch shape; padding must be Valid (as pytorch-msssim). window:
  // Exact, or Float32 for pytorch-msssim's own numbers (its float32 window and raw moments at every scale).
  Options ssim;
  // One exponent per scale, finest first; the number of weights is the number of scales.
  std::vector<double> weights = {0.0448, 0.2856, 0.3001, 0.2363, 0.1333};

  int scales() const { return int(weights.size()); }
  // Every spatial extent must exceed (window - 1) * 2^(scales - 1) (160 for the defaults), so that the
  // window fits the coarsest scale (pytorch-msssim's rule, there for H and W with 5 scales).
  int min_extent() const { return (ssim.window_size - 1) * (1 << (scales() - 1)) + 1; }

  friend bool operator==(const MSSSIMOptions&, const MSSSIMOptions&) = default;
};

// Throws std::invalid_argument naming the offending option.
inline void validate(const MSSSIMOptions& o) {
  validate(o.ssim);
  auto fail = [](const std::string& what) { throw std::invalid_argument("kssim: ms_ssim: " + what); };
  if (o.ssim.padding != Padding::Valid) fail("padding must be Padding::Valid (every scale uses valid windows)");
  if (o.weights.empty() || o.scales() > max_ms_ssim_scales)
    fail("needs 1 to " + std::to_string(max_ms_ssim_scales) + " weights (one per scale), got " +
         std::to_string(o.weights.size()));
  for (double w : o.weights)
    if (!std::isfinite(w) || w < 0) fail("weights must be finite and >= 0, got " + std::to_string(w));
}

}  // namespace kssim

template <>
struct std::hash<kssim::MSSSIMOptions> {
  std::size_t operator()(const kssim::MSSSIMOptions& o) const noexcept {
    std::size_t seed = std::hash<kssim::Options>{}(o.ssim);
    for (double w : o.weights) kssim::impl::hash_combine(seed, std::hash<double>{}(w));
    return seed;
  }
};
