// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// An independent float64 reference of the fused L1 + SSIM loss: loss = a mean|x - y| + (1 - a)(1 - SSIM),
// with SSIM and its gradients from ReferenceSSIM.hpp (a direct window sum) and the L1 term written out
// here, d|x - y|/dx = sign(x - y) with sign(0) = 0.

#include "ReferenceSSIM.hpp"

#include <cmath>
#include <vector>

namespace kssim_test {

struct L1SsimReference {
  double loss = 0, ssim = 0, l1_mean = 0;
  std::vector<double> grad1, grad2;  // d loss / d x, d loss / d y
};

inline L1SsimReference reference_l1_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                         const ReferenceOptions& o, double a) {
  const ReferenceResult ssim = reference_ssim(s, x, y, o, true);
  L1SsimReference r;
  r.ssim = ssim.mean;
  const double count = double(x.size());
  r.grad1.resize(x.size());
  r.grad2.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - y[i];
    r.l1_mean += std::abs(d) / count;
    const double sign = d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0;
    r.grad1[i] = a * sign / count - (1 - a) * ssim.grad1[i];
    r.grad2[i] = -a * sign / count - (1 - a) * ssim.grad2[i];
  }
  r.loss = a * r.l1_mean + (1 - a) * (1 - ssim.mean);
  return r;
}

}  // namespace kssim_test
