#pragma once
// The four statistics planes the forward passes hand on, and how a pass combines them.
//
// After each separable pass, every position holds the weighted moments of the window seen so far, of
// the recentred images x' = x - s1, y' = y - s2 (Recentring.hpp):
//   plane 0: m1  = E[x']                   plane 2: vs  = Var[x'] + Var[y']
//   plane 1: m2  = E[y']                   plane 3: cov = Cov[x', y']
// The map needs the variances only as their sum (b2 = vs + C2), so four planes suffice.
//
// Why moments and not the raw sums E[x'^2]: in float, E[x'^2] - E[x']^2 loses everything when the local
// mean is far from the slice's shift and the local variance is tiny (smooth images, small windows).
// Instead, each pass subtracts one nearby sample c of the means it blurs (the centre of its window, or of
// a small block of windows) before squaring, and combines with the parallel-axis theorem, for weights w
// that sum to 1 and d = m - c:
//   E[m] = c + E_w[d],   Var_total = E_w[Var] + E_w[d^2] - E_w[d]^2,
// where the row pass starts from single pixels (Var = 0). Every square is of a local deviation, so the
// rounding error scales with the local spread, not with the distance to the shift.

#include <kssim/impl/FixedTaps.hpp>
#include <kssim/impl/Tiles.hpp>
#include <kssim/impl/Vectorize.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

inline constexpr int moment_planes = 4;

// The moments outside the image along a pass: every pixel there is 0, i.e. -s after recentring, so the
// means are -s and the spreads vanish.
template <class T>
struct OutsideMoments {
  T values[moment_planes];
  KOKKOS_INLINE_FUNCTION OutsideMoments(T s1, T s2) : values{-s1, -s2, T(0), T(0)} {}
};

// Moments of a window from its centre samples (c1, c2) and the weighted sums of the deviations:
// a1 = E_w[d1], a2 = E_w[d2], spread = E_w[Var + d1^2 + d2^2] (Var summed over both images),
// cross = E_w[Cov + d1 d2]. Writes m1, m2, vs, cov.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void finish_moments(T c1, T c2, T a1, T a2, T spread, T cross, T& m1, T& m2, T& vs,
                                                T& cov) {
  m1 = c1 + a1;
  m2 = c2 + a2;
  vs = spread - a1 * a1 - a2 * a2;
  cov = cross - a1 * a2;
}

// The moments of a row pass for Chunk consecutive outputs from staged recentred pixels: output u
// correlates xs[u .. u + taps - 1] (and ys). Two forms of the same sums:
//  - SharedCentre (GPUs with a compile-time tap count): the Chunk outputs share one centre, the pixel at
//    the middle of their windows (within Chunk/2 pixels of each window's own centre), so every staged
//    pixel's deviations and products are formed once and reused by all the outputs it touches;
//  - otherwise (hosts, and GPUs for other windows): each output subtracts its own window's centre; the
//    loops vectorise over outputs.
template <int Chunk, int Taps, bool SharedCentre, class T, class Window>
KOKKOS_FORCEINLINE_FUNCTION void row_moments(const T* xs, const T* ys, const Window& window,
                                             T (&out)[moment_planes][Chunk]) {
  const int taps = tap_count<Taps>(window);
  T c1[Chunk], c2[Chunk], a1[Chunk], a2[Chunk], spread[Chunk], cross[Chunk];
  for (int u = 0; u < Chunk; ++u) {
    c1[u] = SharedCentre ? xs[(Chunk - 1) / 2 + taps / 2] : xs[u + taps / 2];
    c2[u] = SharedCentre ? ys[(Chunk - 1) / 2 + taps / 2] : ys[u + taps / 2];
    a1[u] = a2[u] = spread[u] = cross[u] = 0;
  }
  if constexpr (SharedCentre && Taps > 0 && Chunk % 4 == 0) {
    // GPUs, fixed tap count: the staged pixels into registers with vector loads (xs, ys are aligned to a
    // chunk, RowScratch in Tiles.hpp), then every multiply-add from registers.
    constexpr int staged = (Chunk + Taps - 1 + 3) / 4 * 4;
    T xv[staged], yv[staged];
    load_quads(xs, xv);
    load_quads(ys, yv);
    for (int u = 0; u < Chunk; ++u) {
      c1[u] = xv[(Chunk - 1) / 2 + Taps / 2];
      c2[u] = yv[(Chunk - 1) / 2 + Taps / 2];
    }
    KSSIM_UNROLL
    for (int s = 0; s < Chunk + Taps - 1; ++s) {
      const T d1 = xv[s] - c1[0], d2 = yv[s] - c2[0];
      const T sq = d1 * d1 + d2 * d2, pr = d1 * d2;
      KSSIM_UNROLL
      for (int u = 0; u < Chunk; ++u) {
        const int t = s - u;  // tap of staged pixel s for output u
        if (t < 0 || t >= Taps) continue;
        const T wt = window.weight[t];
        a1[u] += wt * d1;
        a2[u] += wt * d2;
        spread[u] += wt * sq;
        cross[u] += wt * pr;
      }
    }
  } else if constexpr (SharedCentre) {
    KSSIM_UNROLL
    for (int s = 0; s < Chunk + taps - 1; ++s) {
      const T d1 = xs[s] - c1[0], d2 = ys[s] - c2[0];
      const T sq = d1 * d1 + d2 * d2, pr = d1 * d2;
      for (int u = 0; u < Chunk; ++u) {
        const int t = s - u;
        if (t < 0 || t >= taps) continue;
        const T wt = window.weight[t];
        a1[u] += wt * d1;
        a2[u] += wt * d2;
        spread[u] += wt * sq;
        cross[u] += wt * pr;
      }
    }
  } else {
    for (int t = 0; t < taps; ++t) {
      const T wt = window.weight[t];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) {
        const T d1 = xs[u + t] - c1[u], d2 = ys[u + t] - c2[u];
        a1[u] += wt * d1;
        a2[u] += wt * d2;
        spread[u] += wt * (d1 * d1 + d2 * d2);
        cross[u] += wt * (d1 * d2);
      }
    }
  }
  KSSIM_VECTORIZE
  for (int u = 0; u < Chunk; ++u)
    finish_moments(c1[u], c2[u], a1[u], a2[u], spread[u], cross[u], out[0][u], out[1][u], out[2][u], out[3][u]);
}

// Combines the staged moments of a block of Rows x Chunk outputs along a strided axis: tile rows
// j0 .. j0+Rows-1 (output q uses staged rows j0+q .. j0+q+window-1), columns i0 .. i0+Chunk-1.
// With a compile-time tap count the Rows outputs of a column share one centre, the staged row at the
// middle of their windows: it is within Rows/2 rows of each window's own centre, and sharing it lets
// every staged row's deviations be formed once and reused by all Rows outputs.
template <int Rows, int Chunk, int Taps, class Scratch, class Window, class T>
KOKKOS_FORCEINLINE_FUNCTION void combine_axis_tile(const Scratch& tile, const Window& window, int j0, int i0,
                                                   T (&out)[moment_planes][Rows][Chunk]) {
  const int taps = tap_count<Taps>(window);
  // The shared centre is for the common windows (a compile-time tap count, FixedTaps.hpp), where its
  // savings count; other windows, which include very narrow Gaussians (sigma 0.3, nearly a delta: a
  // centre two rows off then costs ~10x in precision), subtract each output's own centre.
  constexpr bool shared = Taps > 0 || Rows == 1;
  T c1[Rows][Chunk], c2[Rows][Chunk];
  for (int q = 0; q < Rows; ++q) {
    const int centre = shared ? j0 + (Rows - 1) / 2 + taps / 2 : j0 + q + taps / 2;
    for (int u = 0; u < Chunk; ++u) {
      c1[q][u] = tile(0, centre, i0 + u);
      c2[q][u] = tile(1, centre, i0 + u);
    }
  }
  T acc[moment_planes][Rows][Chunk];
  for (int k = 0; k < moment_planes; ++k)
    for (int q = 0; q < Rows; ++q)
      for (int u = 0; u < Chunk; ++u) acc[k][q][u] = 0;
  KSSIM_UNROLL
  for (int s = 0; s < Rows + taps - 1; ++s) {
    const T* m1 = &tile(0, j0 + s, i0);
    const T* m2 = &tile(1, j0 + s, i0);
    const T* vs = &tile(2, j0 + s, i0);
    const T* cv = &tile(3, j0 + s, i0);
    if constexpr (shared) {
      // This staged row's deviations and spreads, formed once for every output that uses it.
      T d1[Chunk], d2[Chunk], spread[Chunk], cross[Chunk];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) {
        d1[u] = m1[u] - c1[0][u];
        d2[u] = m2[u] - c2[0][u];
        spread[u] = vs[u] + d1[u] * d1[u] + d2[u] * d2[u];
        cross[u] = cv[u] + d1[u] * d2[u];
      }
      for (int q = 0; q < Rows; ++q) {
        const int t = s - q;  // tap of staged row s for output q
        if (t < 0 || t >= taps) continue;
        const T wt = window.weight[t];
        KSSIM_VECTORIZE
        for (int u = 0; u < Chunk; ++u) {
          acc[0][q][u] += wt * d1[u];
          acc[1][q][u] += wt * d2[u];
          acc[2][q][u] += wt * spread[u];
          acc[3][q][u] += wt * cross[u];
        }
      }
    } else {
      for (int q = 0; q < Rows; ++q) {
        const int t = s - q;
        if (t < 0 || t >= taps) continue;
        const T wt = window.weight[t];
        for (int u = 0; u < Chunk; ++u) {
          const T d1 = m1[u] - c1[q][u], d2 = m2[u] - c2[q][u];
          acc[0][q][u] += wt * d1;
          acc[1][q][u] += wt * d2;
          acc[2][q][u] += wt * (vs[u] + d1 * d1 + d2 * d2);
          acc[3][q][u] += wt * (cv[u] + d1 * d2);
        }
      }
    }
  }
  for (int q = 0; q < Rows; ++q) {
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u)
      finish_moments(c1[q][u], c2[q][u], acc[0][q][u], acc[1][q][u], acc[2][q][u], acc[3][q][u], out[0][q][u],
                     out[1][q][u], out[2][q][u], out[3][q][u]);
  }
}

}  // namespace kssim::impl
