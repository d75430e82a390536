// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Not LocalMoments' row_moments with a weight: the mask multiplies every tap and each window is centred on
// its own weighted means (its centre pixel may be masked out), so the passes differ. Their sums around the
// centres are LocalMoments' own, with the mask as a weight policy (add_row_tap with PlaneWeight,
// add_staged_moments).
// The moments of masked windows (normalized convolution, MaskMode::Normalized): every sample carries the
// mask's weight m in [0, 1] besides the window's, so a window's moments are those of the weights k m / B(m),
// B(m) = sum k m. The passes hand on the four moment planes of LocalMoments.hpp plus a fifth, the window's
// mask weight B(m), which the next pass needs to combine its rows: the parallel-axis theorem of
// LocalMoments.hpp with row weights k_s B_s(m) instead of k_s, normalised by their sum.
//
// Each window's deviations are taken from its own weighted means (a first pass over the window): the
// window's centre sample, which the unmasked passes use, may be masked out, and deviations from a far
// value would make the variances cancel (E[d^2] - E[d]^2 with |d| ~ 1 in float: errors of 1e-7, against
// C2 = 9e-4). A window of weight 0 keeps its centre sample.
//
// Samples of weight 0 never enter (the staging replaces their values by 0, since missing data may be NaN),
// nor do positions outside the image (weight 0: with Padding::Same a border window is the normalized
// convolution of the pixels it covers, not of zeros). A window of weight 0 has the moments of its centre
// (m1 = c1, m2 = c2, variances 0) and weight 0, which the next pass ignores. Identical images keep their
// exact map of 1: the difference terms B, Q stay exactly 0 as in LocalMoments.hpp.

#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/stages/LocalMoments.hpp>
#include <kssim/impl/core/Vectorize.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

inline constexpr int masked_planes = moment_planes + 1;  // m1, m2, vs, cov, then the mask weight B(m)
inline constexpr int weight_plane = moment_planes;

// The divisions by a window's weight w (>= 0) with select_value (Vectorize.hpp), so that host loops over a
// chunk of outputs vectorise them: with ?: GCC kept every division of masked SSIM's host passes scalar.
// w where w > 0, else 1.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T safe_weight(T w) {
  return select_value(w > T(0), w, T(1));
}
// 1 / w where w > 0, else 0.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T inverse_weight(T w) {
  return select_value(w > T(0), T(1) / safe_weight(w), T(0));
}

// Moments from the weighted sums A, B, P, Q of LocalMoments.hpp and their total weight: the five planes.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void finish_masked_moments(T c1, T c2, T a, T b, T p, T q, T weight, T& m1, T& m2, T& vs,
                                                       T& cov, T& weight_out) {
  const T inv = inverse_weight(weight);
  finish_moments(c1, c2, a * inv, b * inv, p * inv, q * inv, m1, m2, vs, cov);
  weight_out = weight;
}

// Row pass: output u correlates the staged recentred samples xs, ys and mask weights ms at u .. u+taps-1.
// The weighted means of a window (its centre sample where it has no weight) and its weight.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void masked_centres(T sx, T sy, T w, T x0, T y0, T& c1, T& c2) {
  const T safe = safe_weight(w);
  c1 = select_value(w > T(0), sx / safe, x0);
  c2 = select_value(w > T(0), sy / safe, y0);
}

template <int Chunk, int Taps, class T, class Window>
KOKKOS_FORCEINLINE_FUNCTION void masked_row_moments(const T* xs, const T* ys, const T* ms, const Window& window,
                                                    T (&out)[masked_planes][Chunk]) {
  const int taps = tap_count<Taps>(window);
  T c1[Chunk], c2[Chunk], a[Chunk], b[Chunk], p[Chunk], q[Chunk], w[Chunk];
  for (int u = 0; u < Chunk; ++u) a[u] = b[u] = p[u] = q[u] = w[u] = 0;
  KSSIM_UNROLL
  for (int tap = 0; tap < taps; ++tap) {  // the centres
    const T wt = window.weight[tap];
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u) {
      const T mw = wt * ms[u + tap];
      a[u] += mw * xs[u + tap];
      b[u] += mw * ys[u + tap];
      w[u] += mw;
    }
  }
  KSSIM_VECTORIZE
  for (int u = 0; u < Chunk; ++u) {
    masked_centres(a[u], b[u], w[u], xs[u + taps / 2], ys[u + taps / 2], c1[u], c2[u]);
    a[u] = b[u] = 0;
  }
  KSSIM_UNROLL
  for (int tap = 0; tap < taps; ++tap)
    add_row_tap<Chunk>(xs, ys, tap, window.weight[tap], PlaneWeight<T>{ms}, c1, c2, a, b, p, q);
  KSSIM_VECTORIZE
  for (int u = 0; u < Chunk; ++u)
    finish_masked_moments(c1[u], c2[u], a[u], b[u], p[u], q[u], w[u], out[0][u], out[1][u], out[2][u], out[3][u],
                          out[weight_plane][u]);
}

// Strided-axis pass: combines the five staged planes of a block of Rows x Chunk outputs (tile rows
// j0 .. j0+Rows-1, columns i0 .. i0+Chunk-1; output q uses staged rows j0+q .. j0+q+taps-1), each output
// around its own window's weighted means.
template <int Rows, int Chunk, int Taps, class Scratch, class Window, class T>
KOKKOS_FORCEINLINE_FUNCTION void combine_masked_axis_tile(const Scratch& tile, const Window& window, int j0, int i0,
                                                          T (&out)[masked_planes][Rows][Chunk]) {
  const int taps = tap_count<Taps>(window);
  T c1[Rows][Chunk], c2[Rows][Chunk], acc[masked_planes][Rows][Chunk];
  for (int k = 0; k < masked_planes; ++k)
    for (int q = 0; q < Rows; ++q)
      for (int u = 0; u < Chunk; ++u) acc[k][q][u] = 0;
  KSSIM_UNROLL
  for (int s = 0; s < Rows + taps - 1; ++s) {  // the centres
    const T* m1 = &tile(0, j0 + s, i0);
    const T* m2 = &tile(1, j0 + s, i0);
    const T* wm = &tile(weight_plane, j0 + s, i0);
    for (int q = 0; q < Rows; ++q) {
      const int t = s - q;
      if (t < 0 || t >= taps) continue;
      const T wt = window.weight[t];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) {
        const T mw = wt * wm[u];
        acc[0][q][u] += mw * m1[u];
        acc[1][q][u] += mw * m2[u];
        acc[4][q][u] += mw;
      }
    }
  }
  for (int q = 0; q < Rows; ++q) {
    const T* x0 = &tile(0, j0 + q + taps / 2, i0);
    const T* y0 = &tile(1, j0 + q + taps / 2, i0);
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u) {
      masked_centres(acc[0][q][u], acc[1][q][u], acc[weight_plane][q][u], x0[u], y0[u], c1[q][u], c2[q][u]);
      acc[0][q][u] = acc[1][q][u] = 0;
    }
  }
  KSSIM_UNROLL
  for (int s = 0; s < Rows + taps - 1; ++s) {
    const StagedMoments<T> r(tile, j0 + s, i0);
    const T* wm = &tile(weight_plane, j0 + s, i0);
    for (int q = 0; q < Rows; ++q) {
      const int t = s - q;  // tap of staged row s for output q
      if (t < 0 || t >= taps) continue;
      const T wt = window.weight[t];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u)
        add_staged_moments(wt * wm[u], r.m1[u], r.m2[u], r.vs[u], r.cv[u], c1[q][u], c2[q][u], acc[0][q][u],
                           acc[1][q][u], acc[2][q][u], acc[3][q][u]);
    }
  }
  for (int q = 0; q < Rows; ++q) {
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u)
      finish_masked_moments(c1[q][u], c2[q][u], acc[0][q][u], acc[1][q][u], acc[2][q][u], acc[3][q][u], acc[4][q][u],
                            out[0][q][u], out[1][q][u], out[2][q][u], out[3][q][u], out[weight_plane][q][u]);
  }
}

}  // namespace kssim::impl
