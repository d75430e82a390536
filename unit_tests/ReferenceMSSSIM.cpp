// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The definitions of ReferenceMSSSIM.hpp (why in a unit of their own: kssim_test_references, unit_tests/CMakeLists.txt).
#include "ReferenceMSSSIM.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace kssim_test {

std::vector<double> reference_pool(const Shape& s, const std::vector<double>& x) {
  const Shape p = reference_pooled_shape(s);
  const int pd = s.volumetric ? s.d % 2 : 0, ph = s.h % 2, pw = s.w % 2, depth_taps = s.volumetric ? 2 : 1;
  const double divisor = s.volumetric ? 8 : 4;
  std::vector<double> out(p.size(), 0.0);
  for (int n = 0; n < p.n; ++n)
    for (int c = 0; c < p.c; ++c)
      for (int d = 0; d < p.d; ++d)
        for (int h = 0; h < p.h; ++h)
          for (int w = 0; w < p.w; ++w) {
            double sum = 0;
            for (int a = 0; a < depth_taps; ++a)
              for (int b = 0; b < 2; ++b)
                for (int e = 0; e < 2; ++e) {
                  const int qd = s.volumetric ? 2 * d - pd + a : d, qh = 2 * h - ph + b, qw = 2 * w - pw + e;
                  if (qd < 0 || qh < 0 || qw < 0 || qd >= s.d || qh >= s.h || qw >= s.w) continue;
                  sum += x[s.index(n, c, qd, qh, qw)];
                }
            out[p.index(n, c, d, h, w)] = sum / divisor;
          }
  return out;
}

void reference_pool_adjoint(const Shape& s, const std::vector<double>& coarse, std::vector<double>& fine) {
  const Shape p = reference_pooled_shape(s);
  const int pd = s.volumetric ? s.d % 2 : 0, ph = s.h % 2, pw = s.w % 2, depth_taps = s.volumetric ? 2 : 1;
  const double divisor = s.volumetric ? 8 : 4;
  for (int n = 0; n < p.n; ++n)
    for (int c = 0; c < p.c; ++c)
      for (int d = 0; d < p.d; ++d)
        for (int h = 0; h < p.h; ++h)
          for (int w = 0; w < p.w; ++w)
            for (int a = 0; a < depth_taps; ++a)
              for (int b = 0; b < 2; ++b)
                for (int e = 0; e < 2; ++e) {
                  const int qd = s.volumetric ? 2 * d - pd + a : d, qh = 2 * h - ph + b, qw = 2 * w - pw + e;
                  if (qd < 0 || qh < 0 || qw < 0 || qd >= s.d || qh >= s.h || qw >= s.w) continue;
                  fine[s.index(n, c, qd, qh, qw)] += coarse[p.index(n, c, d, h, w)] / divisor;
                }
}

void reference_scale(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                            const ReferenceOptions& o, bool cs, std::vector<double>& means,
                            const std::vector<double>* upstream, std::vector<double>* g1, std::vector<double>* g2) {
  const int k = o.window, kd = s.volumetric ? k : 1;
  const std::vector<double> g = o.float32_window ? reference_float32_gaussian(k, o.sigma) : reference_gaussian(k, o.sigma);
  double deficit = 0;  // what the float32 window lacks of 1 (ReferenceSSIM.hpp); the exact one has none
  if (o.float32_window) {
    double window_sum = 0;
    for (int a = 0; a < kd; ++a)
      for (int b = 0; b < k; ++b)
        for (int e = 0; e < k; ++e) window_sum += (s.volumetric ? g[a] : 1.0) * g[b] * g[e];
    deficit = 1 - window_sum;
  }
  const int md = s.volumetric ? s.d - k + 1 : 1, mh = s.h - k + 1, mw = s.w - k + 1;
  const double pixels = double(md) * mh * mw;
  const double c1 = (o.k1 * o.data_range) * (o.k1 * o.data_range), c2 = (o.k2 * o.data_range) * (o.k2 * o.data_range);
  means.assign(std::size_t(s.n) * s.c, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c) {
      const std::size_t nc = std::size_t(n) * s.c + c;
      for (int pd = 0; pd < md; ++pd)
        for (int ph = 0; ph < mh; ++ph)
          for (int pw = 0; pw < mw; ++pw) {
            auto weight = [&](int a, int b, int e) { return (s.volumetric ? g[a] : 1.0) * g[b] * g[e]; };
            auto at = [&](int a, int b, int e) { return s.index(n, c, pd + a, ph + b, pw + e); };
            double mu1 = 0, mu2 = 0, v1 = 0, v2 = 0, cov = 0;
            for (int pass = 0; pass < 2; ++pass)
              for (int a = 0; a < kd; ++a)
                for (int b = 0; b < k; ++b)
                  for (int e = 0; e < k; ++e) {
                    const double wt = weight(a, b, e), xv = x[at(a, b, e)], yv = y[at(a, b, e)];
                    if (pass == 0) {
                      mu1 += wt * xv;
                      mu2 += wt * yv;
                    } else {
                      v1 += wt * (xv - mu1) * (xv - mu1);
                      v2 += wt * (yv - mu2) * (yv - mu2);
                      cov += wt * (xv - mu1) * (yv - mu2);
                    }
                  }
            v1 += mu1 * mu1 * deficit;  // raw moments (ReferenceSSIM.hpp)
            v2 += mu2 * mu2 * deficit;
            cov += mu1 * mu2 * deficit;
            const double a1 = 2 * mu1 * mu2 + c1, b1 = mu1 * mu1 + mu2 * mu2 + c1;
            const double a2 = 2 * cov + c2, b2 = v1 + v2 + c2;
            const double contrast = a2 / b2, value = cs ? contrast : a1 / b1 * contrast;
            means[nc] += value / pixels;
            if (!upstream) continue;
            // d value / d (mu1, mu2, v1 = v2, cov); then d mu1 / dx_q = k, d v1 / dx_q = 2k (x_q - mu1),
            // d cov / dx_q = k (y_q - mu2).
            const double d_mu1 = cs ? 0.0 : 2 * mu2 * a2 / (b1 * b2) - 2 * mu1 * value / b1;
            const double d_mu2 = cs ? 0.0 : 2 * mu1 * a2 / (b1 * b2) - 2 * mu2 * value / b1;
            const double d_v = -value / b2, d_cov = 2 * (cs ? 1.0 : a1 / b1) / b2;
            const double f = (*upstream)[nc] / pixels;
            for (int a = 0; a < kd; ++a)
              for (int b = 0; b < k; ++b)
                for (int e = 0; e < k; ++e) {
                  const std::size_t q = at(a, b, e);
                  const double wt = f * weight(a, b, e);
                  (*g1)[q] += wt * (d_mu1 + 2 * d_v * (x[q] - mu1) + d_cov * (y[q] - mu2));
                  (*g2)[q] += wt * (d_mu2 + 2 * d_v * (y[q] - mu2) + d_cov * (x[q] - mu1));
                }
          }
    }
}

MsSsimReference reference_ms_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                         const ReferenceOptions& o, const std::vector<double>& weights,
                                         bool with_gradients) {
  const int scales = int(weights.size());
  const std::size_t slices = std::size_t(s.n) * s.c;
  std::vector<Shape> shape{s};
  std::vector<std::vector<double>> xs{x}, ys{y};
  for (int k = 1; k < scales; ++k) {
    xs.push_back(reference_pool(shape.back(), xs.back()));
    ys.push_back(reference_pool(shape.back(), ys.back()));
    shape.push_back(reference_pooled_shape(shape.back()));
  }
  MsSsimReference r;
  r.terms.resize(scales);
  for (int k = 0; k < scales; ++k)
    reference_scale(shape[k], xs[k], ys[k], o, k + 1 < scales, r.terms[k], nullptr, nullptr, nullptr);
  r.per_slice.assign(slices, 1.0);
  for (std::size_t nc = 0; nc < slices; ++nc) {
    for (int k = 0; k < scales; ++k) r.per_slice[nc] *= std::pow(std::max(r.terms[k][nc], 0.0), weights[k]);
    r.mean += r.per_slice[nc] / double(slices);
  }
  if (!with_gradients) return r;
  // d mean / d t_k[nc] = (w_k / t_k) prod / slices, and 0 where t_k is clamped; then scale by scale, the
  // coarsest first, each scale's gradient plus the pooled-back gradient of the next.
  std::vector<double> g1, g2;
  for (int k = scales - 1; k >= 0; --k) {
    std::vector<double> h1(shape[k].size(), 0.0), h2(shape[k].size(), 0.0);
    if (k + 1 < scales) {
      reference_pool_adjoint(shape[k], g1, h1);
      reference_pool_adjoint(shape[k], g2, h2);
    }
    std::vector<double> upstream(slices), unused;
    for (std::size_t nc = 0; nc < slices; ++nc) {
      const double t = r.terms[k][nc];
      upstream[nc] = t > 0 ? weights[k] * r.per_slice[nc] / t / double(slices) : 0.0;
    }
    reference_scale(shape[k], xs[k], ys[k], o, k + 1 < scales, unused, &upstream, &h1, &h2);
    g1 = std::move(h1);
    g2 = std::move(h2);
  }
  r.grad1 = std::move(g1);
  r.grad2 = std::move(g2);
  return r;
}

}  // namespace kssim_test
