// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A float64 host implementation of every SSIMULACRA2 stage, written for the tests from the metric's
// definition (independently of include/kssim/impl/ssimulacra2): sRGB decoding, XYB, 2x2 downscaling, the
// Charalampidis recursive Gaussian (its own derivation of the coefficients, by Gaussian elimination), the
// error maps, the norms and the score. Planes are std::vector<double> of h x w, row-major.

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace s2ref {

using Plane = std::vector<double>;
struct Rgb {
  int h = 0, w = 0;
  std::array<Plane, 3> c;
};

inline double srgb_to_linear(double v) {
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

// Positive XYB of one linear-RGB pixel.
inline std::array<double, 3> xyb(double r, double g, double b) {
  const double m[3][3] = {{0.30, 1.0 - 0.078 - 0.30, 0.078},
                          {0.23, 1.0 - 0.078 - 0.23, 0.078},
                          {0.24342268924547819, 0.20476744424496821, 1.0 - 0.24342268924547819 - 0.20476744424496821}};
  const double bias = 0.0037930732552754493;
  double lms[3];
  for (int i = 0; i < 3; ++i)
    lms[i] = std::cbrt(std::max(m[i][0] * r + m[i][1] * g + m[i][2] * b + bias, 0.0)) - std::cbrt(bias);
  const double x = 0.5 * (lms[0] - lms[1]), y = 0.5 * (lms[0] + lms[1]);
  return {x * 14.0 + 0.42, y + 0.01, lms[2] - y + 0.55};
}

inline Rgb to_xyb(const Rgb& lin) {
  Rgb out{lin.h, lin.w, {}};
  for (auto& p : out.c) p.resize(std::size_t(lin.h) * lin.w);
  for (std::size_t i = 0; i < out.c[0].size(); ++i) {
    const auto v = xyb(lin.c[0][i], lin.c[1][i], lin.c[2][i]);
    for (int k = 0; k < 3; ++k) out.c[k][i] = v[k];
  }
  return out;
}

inline Plane downscale(const Plane& in, int h, int w, int& oh, int& ow) {
  oh = (h + 1) / 2;
  ow = (w + 1) / 2;
  Plane out(std::size_t(oh) * ow);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x) {
      double s = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) s += in[std::size_t(std::min(2 * y + dy, h - 1)) * w + std::min(2 * x + dx, w - 1)];
      out[std::size_t(y) * ow + x] = s / 4;
    }
  return out;
}

// Coefficients of the three recursions (k = 1, 3, 5 of the paper) for sigma.
struct Iir {
  int radius;
  double n2[3], d1[3];
};

inline Iir make_iir(double sigma) {
  const double pi = std::acos(-1.0);
  const int N = int(std::lround(3.2795 * sigma + 0.2546));
  double om[3], p[3], r[3], rho[3];
  for (int i = 0; i < 3; ++i) {
    const int k = 2 * i + 1;
    om[i] = k * pi / (2.0 * N);
    const double sgn = (i % 2) ? -1.0 : 1.0;  // (-1)^((k-1)/2)
    p[i] = sgn / std::tan(om[i] / 2);
    r[i] = sgn * p[i] * p[i] / std::sin(om[i]);
    rho[i] = std::exp(-sigma * sigma * om[i] * om[i] / 2) / N;
  }
  const double D13 = p[0] * r[1] - r[0] * p[1], D35 = p[1] * r[2] - r[1] * p[2], D51 = p[2] * r[0] - r[2] * p[0];
  // Augmented system [A | g], solved by Gaussian elimination with partial pivoting.
  double a[3][4] = {{p[0], p[1], p[2], 1.0},
                    {r[0], r[1], r[2], double(N) * N - sigma * sigma},
                    {D35 / D13, D51 / D13, 1.0, (D35 * rho[0] + D51 * rho[1]) / D13 + rho[2]}};
  for (int col = 0; col < 3; ++col) {
    int piv = col;
    for (int row = col + 1; row < 3; ++row)
      if (std::abs(a[row][col]) > std::abs(a[piv][col])) piv = row;
    for (int k = 0; k < 4; ++k) std::swap(a[col][k], a[piv][k]);
    for (int row = 0; row < 3; ++row) {
      if (row == col) continue;
      const double f = a[row][col] / a[col][col];
      for (int k = 0; k < 4; ++k) a[row][k] -= f * a[col][k];
    }
  }
  Iir c{N, {}, {}};
  for (int i = 0; i < 3; ++i) {
    const double beta = a[i][3] / a[i][i];
    c.n2[i] = -beta * std::cos(om[i] * (N + 1));
    c.d1[i] = -2 * std::cos(om[i]);
  }
  return c;
}

// One line: out[n] = sum_k y_k[n] with y_k[n] = n2_k (x[n-N-1] + x[n+N-1]) - d1_k y_k[n-1] - y_k[n-2].
inline void blur_line(const Iir& c, const double* in, std::ptrdiff_t stride, int len, double* out,
                      std::ptrdiff_t ostride) {
  double y1[3] = {0, 0, 0}, y2[3] = {0, 0, 0};
  const int N = c.radius;
  for (int n = 1 - N; n < len; ++n) {
    const int lo = n - N - 1, hi = n + N - 1;
    const double v = (lo >= 0 ? in[lo * stride] : 0.0) + (hi < len ? in[hi * stride] : 0.0);
    double sum = 0;
    for (int k = 0; k < 3; ++k) {
      const double y = c.n2[k] * v - c.d1[k] * y1[k] - y2[k];
      y2[k] = y1[k];
      y1[k] = y;
      sum += y;
    }
    if (n >= 0) out[n * ostride] = sum;
  }
}

inline Plane blur(const Iir& c, const Plane& in, int h, int w) {
  Plane tmp(in.size()), out(in.size());
  for (int y = 0; y < h; ++y) blur_line(c, in.data() + std::size_t(y) * w, 1, w, tmp.data() + std::size_t(y) * w, 1);
  for (int x = 0; x < w; ++x) blur_line(c, tmp.data() + x, w, h, out.data() + x, w);
  return out;
}

// The six statistics of one channel at one scale: SSIM' 1-/4-norm, artifact 1-/4-norm, detail 1-/4-norm.
inline std::array<double, 6> channel_stats(const Iir& c, const Plane& a, const Plane& b, int h, int w) {
  Plane aa(a.size()), bb(a.size()), ab(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    aa[i] = a[i] * a[i];
    bb[i] = b[i] * b[i];
    ab[i] = a[i] * b[i];
  }
  const Plane m1 = blur(c, a, h, w), m2 = blur(c, b, h, w), s11 = blur(c, aa, h, w), s22 = blur(c, bb, h, w),
              s12 = blur(c, ab, h, w);
  double sum[6] = {0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double num_m = 1 - (m1[i] - m2[i]) * (m1[i] - m2[i]);
    const double num_s = 2 * (s12[i] - m1[i] * m2[i]) + 0.0009;
    const double den_s = (s11[i] - m1[i] * m1[i]) + (s22[i] - m2[i] * m2[i]) + 0.0009;
    const double d = std::max(1 - num_m * num_s / den_s, 0.0);
    const double e = (1 + std::abs(b[i] - m2[i])) / (1 + std::abs(a[i] - m1[i])) - 1;
    const double v[3] = {d, std::max(e, 0.0), std::max(-e, 0.0)};
    for (int k = 0; k < 3; ++k) {
      sum[2 * k] += v[k];
      sum[2 * k + 1] += std::pow(v[k], 4);
    }
  }
  std::array<double, 6> out{};
  const double n = double(a.size());
  for (int k = 0; k < 3; ++k) {
    out[2 * k] = sum[2 * k] / n;
    out[2 * k + 1] = std::pow(sum[2 * k + 1] / n, 0.25);
  }
  return out;
}

// The 108 features, in the weights' order (channel, scale, norm, map), of two linear-RGB images. Like
// libjxl's tool, it stops before a scale when the current image (the previous scale, or the input) is
// smaller than 8 x 8; the features of missing scales are 0, and `scales` says how many there are.
inline std::vector<double> features(Rgb a, Rgb b, int* scales = nullptr) {
  const Iir c = make_iir(1.5);
  std::vector<double> f(108);
  if (scales) *scales = 0;
  for (int s = 0; s < 6; ++s) {
    if (a.h < 8 || a.w < 8) break;
    if (scales) *scales = s + 1;
    if (s > 0) {
      int oh = 0, ow = 0;
      for (int k = 0; k < 3; ++k) {
        a.c[k] = downscale(a.c[k], a.h, a.w, oh, ow);
        b.c[k] = downscale(b.c[k], b.h, b.w, oh, ow);
      }
      a.h = b.h = oh;
      a.w = b.w = ow;
    }
    const Rgb xa = to_xyb(a), xb = to_xyb(b);
    for (int ch = 0; ch < 3; ++ch) {
      const auto st = channel_stats(c, xa.c[ch], xb.c[ch], a.h, a.w);
      for (int norm = 0; norm < 2; ++norm)
        for (int map = 0; map < 3; ++map) f[((ch * 6 + s) * 2 + norm) * 3 + map] = st[map * 2 + norm];
    }
  }
  return f;
}
}  // namespace s2ref
