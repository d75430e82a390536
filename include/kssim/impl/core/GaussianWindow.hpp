// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The normalised 1D Gaussian window, held by value in every kernel functor (it lands in constant/parameter
// memory on GPUs), so no device allocation is needed for it.

#include <kssim/Options.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>

namespace kssim::impl {

template <class T>
struct GaussianWindow {
  T weight[max_window_size];  // normalised: they sum to 1 (to rounding)
  int size;
  // The window SSIM is defined with, over every axis of the map (Window::Float32's sums to 1 - 6.2e-8 for
  // 11x11): it is raw_scale times the normalised one, raw_deficit = 1 - raw_scale (0 for Window::Exact).
  // The blurs use the normalised weights; the map turns their moments into the raw window's (RawWindow.hpp).
  T raw_scale = 1, raw_deficit = 0;

  // The adjoint of a correlation is a correlation with the reversed window (the Gaussian is symmetric,
  // but nothing below relies on that).
  KOKKOS_FUNCTION GaussianWindow reversed() const {
    GaussianWindow r = *this;
    for (int t = 0; t < size; ++t) r.weight[t] = weight[size - 1 - t];
    return r;
  }
};

// Window::Float32's weights (Options.hpp), as float: e[t] = exp(-(t - r)^2 / (2 sigma^2)) rounded to float,
// s = their sum rounded to float (summed in double, exact to far below float's precision), w[t] = e[t] / s
// in float. For 11 / 1.5 these are fused-ssim's hard-coded weights bit for bit.
inline void float32_window_weights(int size, double sigma, float* w) {
  const int r = size / 2;
  double e[max_window_size];
  double sum = 0;
  for (int t = 0; t < size; ++t) {
    const double x = t - r;
    e[t] = static_cast<float>(std::exp(-x * x / (2 * sigma * sigma)));
    sum += e[t];
  }
  const float s = static_cast<float>(sum);
  for (int t = 0; t < size; ++t) w[t] = static_cast<float>(e[t]) / s;
}

// The window of `kind` for a map over `axes` axes (2: images, 3: volumes), its weights rounded once to T.
// Window::Exact: g[t] = exp(-(t - r)^2 / (2 sigma^2)) / sum, in double. Window::Float32: its float weights
// normalised in double (their sum S1 to 1), and raw_scale = S1^axes, the raw window's total weight.
template <class T>
GaussianWindow<T> make_gaussian_window(int size, double sigma, Window kind = Window::Exact, int axes = 2) {
  GaussianWindow<T> g{};
  g.size = size;
  double w[max_window_size];
  double sum = 0;
  if (kind == Window::Float32) {
    float f[max_window_size];
    float32_window_weights(size, sigma, f);
    for (int t = 0; t < size; ++t) sum += w[t] = f[t];
    const double scale = std::pow(sum, axes);
    g.raw_scale = static_cast<T>(scale);
    g.raw_deficit = static_cast<T>(1 - scale);
  } else {
    const int r = size / 2;
    for (int t = 0; t < size; ++t) {
      const double x = t - r;
      sum += w[t] = std::exp(-x * x / (2 * sigma * sigma));
    }
  }
  for (int t = 0; t < size; ++t) g.weight[t] = static_cast<T>(w[t] / sum);
  return g;
}

}  // namespace kssim::impl
