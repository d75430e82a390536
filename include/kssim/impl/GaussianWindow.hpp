#pragma once
// The normalised 1D Gaussian window, held by value in every kernel functor (it lands in constant/parameter
// memory on GPUs), so no device allocation is needed for it.

#include <kssim/Options.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>

namespace kssim::impl {

template <class T>
struct GaussianWindow {
  T weight[max_window_size];
  int size;

  // The adjoint of a correlation is a correlation with the reversed window (the Gaussian is symmetric,
  // but nothing below relies on that).
  KOKKOS_FUNCTION GaussianWindow reversed() const {
    GaussianWindow r = *this;
    for (int t = 0; t < size; ++t) r.weight[t] = weight[size - 1 - t];
    return r;
  }
};

// Weights computed in double and rounded once to T: g[t] = exp(-(t - r)^2 / (2 sigma^2)) / sum.
template <class T>
GaussianWindow<T> make_gaussian_window(int size, double sigma) {
  GaussianWindow<T> g{};
  g.size = size;
  const int r = size / 2;
  double w[max_window_size];
  double sum = 0;
  for (int t = 0; t < size; ++t) {
    const double x = t - r;
    w[t] = std::exp(-x * x / (2 * sigma * sigma));
    sum += w[t];
  }
  for (int t = 0; t < size; ++t) g.weight[t] = static_cast<T>(w[t] / sum);
  return g;
}

}  // namespace kssim::impl
