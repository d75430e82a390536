// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The data that defines SSIMULACRA2 (version 2.1, as in libjxl's tools since April 2023): the opsin
// absorbance matrix and bias of XYB, the offsets that make XYB positive, the SSIM stabiliser, the 108
// feature weights and the final mapping. These are published constants and must match bit for bit.
// Also the coefficients of the recursive Gaussian, derived here from sigma (Charalampidis 2016).

#include <cmath>

namespace kssim::impl::s2 {

inline constexpr int num_scales = 6;  // at most: smaller images have fewer (scale_count(), Planes.hpp)
inline constexpr int num_stats = 6;  // per scale and channel: SSIM 1-/4-norm, artifact 1-/4-norm, detail 1-/4-norm
inline constexpr int num_features = num_scales * 3 * num_stats;  // 108
// The smallest width and height the reference tool accepts ("Minimum image size is 8x8 pixels").
inline constexpr int min_extent = 8;

// Linear sRGB -> LMS-like "mixed" values: rows of the opsin absorbance matrix, then the bias.
struct Opsin {
  static constexpr float m00 = 0.30f, m02 = 0.078f, m01 = 1.0f - m02 - m00;
  static constexpr float m10 = 0.23f, m12 = 0.078f, m11 = 1.0f - m12 - m10;
  static constexpr float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f, m22 = 1.0f - m20 - m21;
  static constexpr float bias = 0.0037930732552754493f;
};

// XYB -> the "positive" XYB the metric compares: X * 14 + 0.42, Y + 0.01, (B - Y) + 0.55.
struct PositiveXyb {
  static constexpr float x_scale = 14.0f, x_offset = 0.42f, y_offset = 0.01f, b_offset = 0.55f;
};

inline constexpr float ssim_c2 = 0.0009f;

// Feature weights in the order channel (X, Y, B), scale (1:1 .. 1:32), norm (1, 4), map (SSIM, artifact,
// detail loss).
inline constexpr double weights[num_features] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
    0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0,
    0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437,
    0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682,
    0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
    0.0005130064588990679, 0.0, 0.00010854057858411537};

// The weighted sum s -> score: s * a, then a cubic, then 100 - 10 * s^e (100 when s <= 0).
struct ScoreMapping {
  static constexpr double scale = 0.9562382616834844;
  static constexpr double c1 = 2.326765642916932, c2 = -0.020884521182843837, c3 = 6.248496625763138e-05;
  static constexpr double exponent = 0.6276336467831387;
};

// The recursive Gaussian: three second-order recursions (k = 1, 3, 5) whose outputs are summed:
//   y_k[n] = n2_k * (x[n - R - 1] + x[n + R - 1]) - d1_k * y_k[n - 1] - y_k[n - 2],
// started at n = 1 - R with zero state and zero input outside the signal; out[n] = sum_k y_k[n], n >= 0.
// The horizontal pass runs the recursion four outputs at a time, as the reference tool does: output l of a
// block of four depends on the block's four input sums and the two outputs before the block through
// in[l], prev[l] and prev2[l] (the recursion expanded four times), which changes the float rounding; the
// scores agree with the tool's to a few 1e-3 only if the rounding does too.
struct IirCoefficients {
  float n2[3];
  float d1[3];
  float in[3][4], prev[3][4], prev2[3][4];
  int radius;
};

// Solves the 3x3 system of the paper (eqs. 37-56) for the weights beta_k, in double, then rounds the
// recursion's coefficients to float (the recursion itself runs in float, as in the reference tool).
inline IirCoefficients make_iir_coefficients(double sigma) {
  const double pi = 3.141592653589793238;
  const double radius = std::round(3.2795 * sigma + 0.2546);
  double w[3], p[3], r[3], rho[3];
  for (int i = 0; i < 3; ++i) {
    w[i] = (2 * i + 1) * pi / (2 * radius);
    const double sign = i == 1 ? -1.0 : 1.0;
    p[i] = sign / std::tan(0.5 * w[i]);
    r[i] = sign * p[i] * p[i] / std::sin(w[i]);
    rho[i] = std::exp(-0.5 * sigma * sigma * w[i] * w[i]) / radius;
  }
  const double d13 = p[0] * r[1] - r[0] * p[1];
  const double d35 = p[1] * r[2] - r[1] * p[2];
  const double d51 = p[2] * r[0] - r[2] * p[0];
  const double z15 = d35 / d13, z35 = d51 / d13;
  // A beta = g with A = [p; r; (z15, z35, 1)], solved by Cramer's rule.
  const double a[3][3] = {{p[0], p[1], p[2]}, {r[0], r[1], r[2]}, {z15, z35, 1.0}};
  const double g[3] = {1.0, radius * radius - sigma * sigma, z15 * rho[0] + z35 * rho[1] + rho[2]};
  auto det = [](const double (&m)[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double da = det(a);
  IirCoefficients c{};
  c.radius = int(radius);
  for (int k = 0; k < 3; ++k) {
    double m[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] = j == k ? g[i] : a[i][j];
    const double beta = det(m) / da;
    const double n2 = -beta * std::cos(w[k] * (radius + 1.0)), d1 = -2.0 * std::cos(w[k]), d2 = d1 * d1;
    c.n2[k] = float(n2);
    c.d1[k] = float(d1);
    // o0 = n i0 - d p - pp, o1 = n i1 - d o0 - p, ... expanded in terms of i0..i3, p and pp.
    const double in[4] = {n2, -d1 * n2, d2 * n2 - n2, -d2 * d1 * n2 + 2.0 * d1 * n2};
    const double prev[4] = {-d1, d2 - 1.0, -d2 * d1 + 2.0 * d1, d2 * d2 - 3.0 * d2 + 1.0};
    const double prev2[4] = {-1.0, d1, -d2 + 1.0, d2 * d1 - 2.0 * d1};
    for (int l = 0; l < 4; ++l) {
      c.in[k][l] = float(in[l]);
      c.prev[k][l] = float(prev[l]);
      c.prev2[k][l] = float(prev2[l]);
    }
  }
  return c;
}

}  // namespace kssim::impl::s2
