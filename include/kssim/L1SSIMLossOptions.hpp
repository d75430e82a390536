// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The knobs of the fused L1 + SSIM loss (kssim/L1SSIMLoss.hpp): the SSIM options and the weight of the L1 term.
// Defaults are 3D Gaussian Splatting's: loss = 0.8 mean|x - y| + 0.2 (1 - SSIM) with zero ("same") padding.

#include <kssim/Options.hpp>

#include <stdexcept>
#include <string>

namespace kssim {

struct L1SSIMLossOptions {
  Options ssim{.padding = Padding::Same};  // window, sigma, k1, k2, data_range, padding (Same by default)
  double l1_weight = 0.8;                   // a in a * mean|x - y| + (1 - a) * (1 - SSIM), in [0, 1]

  friend bool operator==(const L1SSIMLossOptions&, const L1SSIMLossOptions&) = default;
};

// Throws std::invalid_argument naming the offending option.
inline void validate(const L1SSIMLossOptions& o) {
  validate(o.ssim);
  if (!(o.l1_weight >= 0 && o.l1_weight <= 1))  // NaN fails both
    throw std::invalid_argument("kssim: l1_ssim_loss: l1_weight must be in [0, 1], got " + std::to_string(o.l1_weight));
}

}  // namespace kssim

template <>
struct std::hash<kssim::L1SSIMLossOptions> {
  std::size_t operator()(const kssim::L1SSIMLossOptions& o) const noexcept {
    return kssim::impl::hash_fields(o.ssim, o.l1_weight);
  }
};
