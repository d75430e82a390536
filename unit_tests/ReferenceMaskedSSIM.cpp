// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The definitions of ReferenceMaskedSSIM.hpp (why in a unit of their own: kssim_test_references, unit_tests/CMakeLists.txt).
#include "ReferenceMaskedSSIM.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace kssim_test {

MaskedReference reference_masked_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                             const std::vector<double>& mask, int mask_channels,
                                             const ReferenceOptions& o, bool normalized, bool with_gradients) {
  const int k = o.window, pad = o.same ? k / 2 : 0, kd = s.volumetric ? k : 1, padd = s.volumetric ? pad : 0;
  const int centre = k / 2 - pad, centre_d = s.volumetric ? centre : 0;  // map pixel -> its window's centre
  const std::vector<double> g = reference_gaussian(k, o.sigma);
  Shape ms = s;
  ms.c = mask_channels;
  MaskedReference r;
  const Shape m = reference_map_shape(s, o);
  r.map_shape = m;
  r.map.assign(m.size(), 0.0);
  const double c1 = (o.k1 * o.data_range) * (o.k1 * o.data_range), c2 = (o.k2 * o.data_range) * (o.k2 * o.data_range);
  auto mask_at = [&](int n, int c, int d, int h, int w) { return mask[ms.index(n, mask_channels == 1 ? 0 : c, d, h, w)]; };
  // The weights first: the gradient of the mean needs their total.
  std::vector<double> slice_weight(std::size_t(s.n) * s.c, 0.0), slice_value(slice_weight.size(), 0.0);
  double total_weight = 0;
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int pd = 0; pd < m.d; ++pd)
        for (int ph = 0; ph < m.h; ++ph)
          for (int pw = 0; pw < m.w; ++pw) {
            const double w = mask_at(n, c, pd + centre_d, ph + centre, pw + centre);
            slice_weight[std::size_t(n) * s.c + c] += w;
            total_weight += w;
          }
  if (with_gradients) {
    r.grad1.assign(s.size(), 0.0);
    r.grad2.assign(s.size(), 0.0);
  }
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int pd = 0; pd < m.d; ++pd)
        for (int ph = 0; ph < m.h; ++ph)
          for (int pw = 0; pw < m.w; ++pw) {
            // The window's samples: position, Gaussian weight times (normalized) mask.
            struct Sample {
              std::size_t q;
              double k;
            };
            std::vector<Sample> samples;
            double total = 0;
            for (int a = 0; a < kd; ++a)
              for (int b = 0; b < k; ++b)
                for (int e = 0; e < k; ++e) {
                  const int qd = pd + a - padd, qh = ph + b - pad, qw = pw + e - pad;
                  const double wt = (s.volumetric ? g[a] : 1.0) * g[b] * g[e];
                  const bool inside = qd >= 0 && qd < s.d && qh >= 0 && qh < s.h && qw >= 0 && qw < s.w;
                  if (!normalized) {  // zeros outside the image, every pixel inside
                    samples.push_back({inside ? s.index(n, c, qd, qh, qw) : std::size_t(-1), wt});
                    total += wt;
                    continue;
                  }
                  if (!inside) continue;
                  const double mq = mask_at(n, c, qd, qh, qw);
                  if (mq == 0) continue;
                  samples.push_back({s.index(n, c, qd, qh, qw), wt * mq});
                  total += wt * mq;
                }
            const std::size_t p = m.index(n, c, pd, ph, pw);
            if (normalized && total == 0) continue;  // no valid pixel: map 0, weight 0
            auto xv = [&](const Sample& t) { return t.q == std::size_t(-1) ? 0.0 : x[t.q]; };
            auto yv = [&](const Sample& t) { return t.q == std::size_t(-1) ? 0.0 : y[t.q]; };
            const double norm = normalized ? total : 1.0;  // plain windows: the Gaussian's own sum, 1
            double mu1 = 0, mu2 = 0, v1 = 0, v2 = 0, cov = 0;
            for (const Sample& t : samples) {
              mu1 += t.k * xv(t) / norm;
              mu2 += t.k * yv(t) / norm;
            }
            for (const Sample& t : samples) {
              v1 += t.k * (xv(t) - mu1) * (xv(t) - mu1) / norm;
              v2 += t.k * (yv(t) - mu2) * (yv(t) - mu2) / norm;
              cov += t.k * (xv(t) - mu1) * (yv(t) - mu2) / norm;
            }
            const double a1 = 2 * mu1 * mu2 + c1, a2 = 2 * cov + c2;
            const double b1 = mu1 * mu1 + mu2 * mu2 + c1, b2 = v1 + v2 + c2;
            const double value = a1 * a2 / (b1 * b2);
            r.map[p] = value;
            const double w = mask_at(n, c, pd + centre_d, ph + centre, pw + centre);
            if (w > 0) slice_value[std::size_t(n) * s.c + c] += w * value;
            if (!with_gradients || w == 0) continue;
            const double d_mu1 = 2 * mu2 * a2 / (b1 * b2) - 2 * mu1 * value / b1;
            const double d_mu2 = 2 * mu1 * a2 / (b1 * b2) - 2 * mu2 * value / b1;
            const double d_v = -value / b2, d_cov = 2 * a1 / (b1 * b2);
            for (const Sample& t : samples) {
              if (t.q == std::size_t(-1)) continue;
              const double f = w / total_weight * t.k / norm;
              r.grad1[t.q] += f * (d_mu1 + 2 * d_v * (x[t.q] - mu1) + d_cov * (y[t.q] - mu2));
              r.grad2[t.q] += f * (d_mu2 + 2 * d_v * (y[t.q] - mu2) + d_cov * (x[t.q] - mu1));
            }
          }
  double value_total = 0;
  r.per_image.assign(s.n, 0.0);
  r.per_channel.assign(slice_weight.size(), 0.0);
  for (int n = 0; n < s.n; ++n) {
    double v = 0, w = 0;
    for (int c = 0; c < s.c; ++c) {
      const std::size_t nc = std::size_t(n) * s.c + c;
      r.per_channel[nc] = slice_value[nc] / slice_weight[nc];
      v += slice_value[nc];
      w += slice_weight[nc];
    }
    r.per_image[n] = v / w;
    value_total += v;
  }
  r.mean = value_total / total_weight;
  return r;
}

}  // namespace kssim_test
