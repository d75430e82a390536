// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The definitions of ReferenceSSIM.hpp (why in a unit of their own: kssim_test_references, unit_tests/CMakeLists.txt).
#include "ReferenceSSIM.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace kssim_test {

std::vector<double> reference_gaussian(int size, double sigma) {
  std::vector<double> g(size);
  double sum = 0;
  for (int t = 0; t < size; ++t) {
    const double x = t - size / 2;
    g[t] = std::exp(-x * x / (2 * sigma * sigma));
    sum += g[t];
  }
  for (double& v : g) v /= sum;
  return g;
}

std::vector<double> reference_float32_gaussian(int size, double sigma) {
  std::vector<float> e(size);
  long double sum = 0;
  for (int t = 0; t < size; ++t) {
    const double x = t - size / 2;
    e[t] = float(std::exp(-x * x / (2 * sigma * sigma)));
    sum += e[t];
  }
  std::vector<double> g(size);
  for (int t = 0; t < size; ++t) g[t] = double(e[t] / float(sum));
  return g;
}

int reference_source(int q, int n, Outside outside) {
  if (q >= 0 && q < n) return q;
  if (outside == Outside::Reflect) {
    while (q < 0 || q >= n) q = q < 0 ? -q : 2 * (n - 1) - q;
    return q;
  }
  if (outside == Outside::Replicate) return q < 0 ? 0 : n - 1;
  return -1;
}

ReferenceResult reference_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                      const ReferenceOptions& o, bool with_gradients) {
  const int w = o.window, pad = o.same ? w / 2 : 0;
  const std::vector<double> g = o.float32_window ? reference_float32_gaussian(w, o.sigma) : reference_gaussian(w, o.sigma);
  // What the float32 window lacks of 1 (6.2e-8 for fused-ssim's 11x11); the exact one sums to 1 by definition
  // (its computed sum differs by rounding only, which data far from zero would magnify).
  double deficit = 0;
  if (o.float32_window) {
    double window_sum = 0;
    for (int a = 0; a < (s.volumetric ? w : 1); ++a)
      for (int b = 0; b < w; ++b)
        for (int e = 0; e < w; ++e) window_sum += (s.volumetric ? g[a] : 1.0) * g[b] * g[e];
    deficit = 1 - window_sum;
  }
  ReferenceResult r;
  const Shape m = reference_map_shape(s, o);
  r.map_shape = m;
  r.map.assign(m.size(), 0);
  r.per_image.assign(s.n, 0);
  r.per_channel.assign(std::size_t(s.n) * s.c, 0);
  if (with_gradients) {
    r.grad1.assign(s.size(), 0);
    r.grad2.assign(s.size(), 0);
  }
  const double c1 = (o.k1 * o.data_range) * (o.k1 * o.data_range);
  const double c2 = (o.k2 * o.data_range) * (o.k2 * o.data_range);
  const int wd = s.volumetric ? w : 1, padd = s.volumetric ? pad : 0;
  const double count = double(m.size());
  double total = 0;

  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c) {
      double slice_sum = 0;
      for (int pd = 0; pd < m.d; ++pd)
        for (int ph = 0; ph < m.h; ++ph)
          for (int pw = 0; pw < m.w; ++pw) {
            // Window statistics at this map pixel; positions outside the image read what o.outside says. Two
            // passes (means, then centred moments) keep the reference accurate even for near-constant data far
            // from zero.
            auto source = [&](int qd, int qh, int qw) -> long long {
              const int sd = reference_source(qd, s.d, o.outside), sh = reference_source(qh, s.h, o.outside),
                        sw = reference_source(qw, s.w, o.outside);
              if (sd < 0 || sh < 0 || sw < 0) return -1;
              return (long long)s.index(n, c, sd, sh, sw);
            };
            auto value_at = [&](const std::vector<double>& img, int qd, int qh, int qw) {
              const long long q = source(qd, qh, qw);
              return q < 0 ? 0.0 : img[std::size_t(q)];
            };
            double mu1 = 0, mu2 = 0, v1 = 0, v2 = 0, cov = 0;
            for (int pass = 0; pass < 2; ++pass)
              for (int a = 0; a < wd; ++a)
                for (int b = 0; b < w; ++b)
                  for (int e = 0; e < w; ++e) {
                    const int qd = pd + a - padd, qh = ph + b - pad, qw = pw + e - pad;
                    const double k = (s.volumetric ? g[a] : 1.0) * g[b] * g[e];
                    const double xv = value_at(x, qd, qh, qw), yv = value_at(y, qd, qh, qw);
                    if (pass == 0) {
                      mu1 += k * xv;
                      mu2 += k * yv;
                    } else {
                      v1 += k * (xv - mu1) * (xv - mu1);
                      v2 += k * (yv - mu2) * (yv - mu2);
                      cov += k * (xv - mu1) * (yv - mu2);
                    }
                  }
            // The raw moments B(x^2) - B(x)^2 that SSIM is defined by: the centred sums plus mu^2 (1 - sum of
            // the window), a correction that vanishes for a window summing to 1. Their derivatives are the
            // textbook ones below for any window: d v1/dx_q = 2k (x_q - mu1), d cov/dx_q = k (y_q - mu2).
            v1 += mu1 * mu1 * deficit;
            v2 += mu2 * mu2 * deficit;
            cov += mu1 * mu2 * deficit;
            const double a1 = 2 * mu1 * mu2 + c1, a2 = 2 * cov + c2;
            const double b1 = mu1 * mu1 + mu2 * mu2 + c1, b2 = v1 + v2 + c2;
            const double value = a1 * a2 / (b1 * b2);
            r.map[m.index(n, c, pd, ph, pw)] = value;
            slice_sum += value;
            if (!with_gradients) continue;
            // d value / d (mu1, mu2, v1 = v2, cov), then through the window to every covered pixel (to the pixel
            // that a position outside the image read): d mu1/dx_q = k, d v1/dx_q = 2k (x_q - mu1),
            // d cov/dx_q = k (y_q - mu2).
            const double d_mu1 = 2 * mu2 * a2 / (b1 * b2) - 2 * mu1 * value / b1;
            const double d_mu2 = 2 * mu1 * a2 / (b1 * b2) - 2 * mu2 * value / b1;
            const double d_v = -value / b2, d_cov = 2 * a1 / (b1 * b2);
            for (int a = 0; a < wd; ++a)
              for (int b = 0; b < w; ++b)
                for (int e = 0; e < w; ++e) {
                  const long long src = source(pd + a - padd, ph + b - pad, pw + e - pad);
                  if (src < 0) continue;
                  const double k = (s.volumetric ? g[a] : 1.0) * g[b] * g[e] / count;
                  const std::size_t q = std::size_t(src);
                  r.grad1[q] += k * (d_mu1 + 2 * d_v * (x[q] - mu1) + d_cov * (y[q] - mu2));
                  r.grad2[q] += k * (d_mu2 + 2 * d_v * (y[q] - mu2) + d_cov * (x[q] - mu1));
                }
          }
      total += slice_sum;
      const double per_slice = double(m.d) * m.h * m.w;
      r.per_channel[std::size_t(n) * s.c + c] = slice_sum / per_slice;
      r.per_image[n] += slice_sum / (per_slice * s.c);
    }
  r.mean = total / count;
  return r;
}

}  // namespace kssim_test
