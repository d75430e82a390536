// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
//
// Identical images give a map of exactly 1. Inside a pass the sums run over the sum and the difference of
// the two images' deviations, s = d1 + d2 and t = d1 - d2 (accumulated: A = E_w[s], B = E_w[t],
// P = E_w[Var_u + s^2], Q = E_w[Var_w + t^2] for u = x' + y', w = x' - y'). When both images are the same
// data, t and Var_w are exactly 0, so B = Q = 0 exactly however the compiler contracts multiply-adds, and
// the planes come out with m1 == m2 and vs == 2 cov bit for bit (the factors 1/2 and 1/4 are exact): the
// map formula's numerator and denominator are then equal (MapFormula.hpp).

#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Vectorize.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

inline constexpr int moment_planes = 4;

// The form in which a pass hands its four planes on.
//   Standard:      (m1, m2, vs, cov) above: what every stage schedule writes and the map reads.
//   SumDifference: (m1 + m2, m1 - m2, Var_u, Var_w) of u = x' + y', w = x' - y': exactly the sums the next
//                  pass accumulates, so the column pass reads a staged row and only subtracts its centres
//                  (4 operations per staged row instead of 8). The fused forward's row planes never leave
//                  its team scratch, so it uses this form between its two passes. Identical images give
//                  plane 1 == plane 3 == 0 exactly, as B and Q above.
enum class MomentForm { Standard, SumDifference };

// The moments outside the image along a pass: every pixel there is 0, i.e. -s after recentring, so the
// means are -s and the spreads vanish.
template <class T>
struct OutsideMoments {
  T values[moment_planes];
  KOKKOS_INLINE_FUNCTION OutsideMoments(T s1, T s2) : values{-s1, -s2, T(0), T(0)} {}
};

// Moments of a window from its centre samples (c1, c2) and the weighted sums A, B, P, Q above.
// Writes m1, m2, vs = Var[x'] + Var[y'] = (Var_u + Var_w) / 2 and cov = (Var_u - Var_w) / 4.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void finish_moments(T c1, T c2, T a, T b, T p, T q, T& m1, T& m2, T& vs, T& cov) {
  m1 = c1 + T(0.5) * (a + b);
  m2 = c2 + T(0.5) * (a - b);
  const T var_u = p - a * a, var_w = q - b * b;
  vs = T(0.5) * (var_u + var_w);
  cov = T(0.25) * (var_u - var_w);
}

// The planes of the SumDifference form from the centres and the weighted sums A, B, P, Q above.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void finish_sum_difference(T c1, T c2, T a, T b, T p, T q, T& su, T& dm, T& var_u,
                                                       T& var_w) {
  su = (c1 + c2) + a;
  dm = (c1 - c2) + b;
  var_u = p - a * a;
  var_w = q - b * b;
}

// The Standard moments of a window combined from SumDifference planes: its centre planes (cs, ct) and the
// weighted sums A = E_w[s], B = E_w[t], P = E_w[Var_u + s^2], Q = E_w[Var_w + t^2] of s = su - cs,
// t = dm - ct. m1 == m2 and vs == 2 cov bit for bit when B == Q == ct == 0 (identical images).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void finish_from_sum_difference(T cs, T ct, T a, T b, T p, T q, T& m1, T& m2, T& vs,
                                                            T& cov) {
  const T su = cs + a, dm = ct + b;
  m1 = T(0.5) * (su + dm);
  m2 = T(0.5) * (su - dm);
  const T var_u = p - a * a, var_w = q - b * b;
  vs = T(0.5) * (var_u + var_w);
  cov = T(0.25) * (var_u - var_w);
}

// The sum and difference of a staged sample's deviations from the centres.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void sum_and_difference(T v1, T v2, T c1, T c2, T& s, T& t) {
  const T d1 = v1 - c1, d2 = v2 - c2;
  s = d1 + d2;
  t = d1 - d2;
}

// What a row pass reads: the two recentred images x', y' (Images), or their sum and difference
// u = x' + y', w = x' - y' (SumDifference: the fused forward stages them so, once per staged pixel, and its
// row pass then forms each deviation pair s, t with 2 operations instead of 4). Identical images stage
// w = 0 exactly, so t, B and Q stay exactly 0 (the top of this file).
enum class StagedPixels { Images, SumDifference };

// s, t of a staged sample (v1, v2) around centres (c1, c2) given in the same form.
template <StagedPixels Input, class T>
KOKKOS_FORCEINLINE_FUNCTION void staged_deviations(T v1, T v2, T c1, T c2, T& s, T& t) {
  if constexpr (Input == StagedPixels::SumDifference) {
    s = v1 - c1;
    t = v2 - c2;
  } else {
    sum_and_difference(v1, v2, c1, c2, s, t);
  }
}

// The weight of a sample: its tap's window weight wt (NoWeight), or that times the sample's own weight in
// [0, 1] (PlaneWeight: the mask of normalized statistics, MaskedMoments.hpp). A compile-time policy, so that
// SSIM's passes carry no weight code.
struct NoWeight {
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION T operator()(T wt, int) const { return wt; }
};
template <class T>
struct PlaneWeight {
  const T* w;  // the staged weights of the samples
  KOKKOS_FORCEINLINE_FUNCTION T operator()(T wt, int j) const { return wt * w[j]; }
};

// One tap of a row pass around each output's own centres: adds the deviations of sample u + tap from output
// u's centres (c1, c2), weighted by weight(wt, u + tap), to its sums A, B, P, Q above.
template <int Chunk, StagedPixels Input = StagedPixels::Images, class T, class Weight>
KOKKOS_FORCEINLINE_FUNCTION void add_row_tap(const T* xs, const T* ys, int tap, T wt, const Weight& weight,
                                             const T (&c1)[Chunk], const T (&c2)[Chunk], T (&a)[Chunk],
                                             T (&b)[Chunk], T (&p)[Chunk], T (&q)[Chunk]) {
  KSSIM_VECTORIZE
  for (int u = 0; u < Chunk; ++u) {
    const T w = weight(wt, u + tap);
    T s, t;
    staged_deviations<Input>(xs[u + tap], ys[u + tap], c1[u], c2[u], s, t);
    a[u] += w * s;
    b[u] += w * t;
    p[u] += w * (s * s);
    q[u] += w * (t * t);
  }
}

// Staged row j of an axis tile's four moment planes, from tile column i0.
template <class T>
struct StagedMoments {
  const T* m1;
  const T* m2;
  const T* vs;
  const T* cv;
  template <class Scratch>
  KOKKOS_FORCEINLINE_FUNCTION StagedMoments(const Scratch& tile, int j, int i0)
      : m1(&tile(0, j, i0)), m2(&tile(1, j, i0)), vs(&tile(2, j, i0)), cv(&tile(3, j, i0)) {}
};

// A staged row's Standard moments (m1, m2, vs, cov) around an output's centres (c1, c2), weighted by w, added
// to the output's sums A, B, P, Q above (P gets Var_u + s^2 = vs + 2 cov + s^2, Q Var_w + t^2).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void add_staged_moments(T w, T m1, T m2, T vs, T cov, T c1, T c2, T& a, T& b, T& p,
                                                    T& q) {
  T su, tw;
  sum_and_difference(m1, m2, c1, c2, su, tw);
  a += w * su;
  b += w * tw;
  p += w * ((vs + 2 * cov) + su * su);
  q += w * ((vs - 2 * cov) + tw * tw);
}

// The moments of a row pass for Chunk consecutive outputs from staged recentred pixels: output u
// correlates xs[u .. u + taps - 1] (and ys). Two forms of the same sums:
//  - SharedCentre (GPUs with a compile-time tap count): the Chunk outputs share one centre, the pixel at
//    the middle of their windows (within Chunk/2 pixels of each window's own centre), so every staged
//    pixel's deviations and products are formed once and reused by all the outputs it touches;
//  - otherwise (hosts, and GPUs for other windows): each output subtracts its own window's centre; the
//    loops vectorise over outputs.
// Input: what xs, ys hold (StagedPixels); the centres are then in that form too.
template <int Chunk, int Taps, bool SharedCentre, MomentForm Form = MomentForm::Standard,
          StagedPixels Input = StagedPixels::Images, class T, class Window>
KOKKOS_FORCEINLINE_FUNCTION void row_moments(const T* xs, const T* ys, const Window& window,
                                             T (&out)[moment_planes][Chunk]) {
  const int taps = tap_count<Taps>(window);
  T c1[Chunk], c2[Chunk], a[Chunk], b[Chunk], p[Chunk], q[Chunk];
  for (int u = 0; u < Chunk; ++u) {
    c1[u] = SharedCentre ? xs[(Chunk - 1) / 2 + taps / 2] : xs[u + taps / 2];
    c2[u] = SharedCentre ? ys[(Chunk - 1) / 2 + taps / 2] : ys[u + taps / 2];
    a[u] = b[u] = p[u] = q[u] = 0;
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
    for (int j = 0; j < Chunk + Taps - 1; ++j) {
      T s, t;
      staged_deviations<Input>(xv[j], yv[j], c1[0], c2[0], s, t);
      const T ss = s * s, tt = t * t;
      KSSIM_UNROLL
      for (int u = 0; u < Chunk; ++u) {
        const int tap = j - u;  // tap of staged pixel j for output u
        if (tap < 0 || tap >= Taps) continue;
        const T wt = window.weight[tap];
        a[u] += wt * s;
        b[u] += wt * t;
        p[u] += wt * ss;
        q[u] += wt * tt;
      }
    }
  } else if constexpr (SharedCentre) {
    KSSIM_UNROLL
    for (int j = 0; j < Chunk + taps - 1; ++j) {
      T s, t;
      staged_deviations<Input>(xs[j], ys[j], c1[0], c2[0], s, t);
      const T ss = s * s, tt = t * t;
      for (int u = 0; u < Chunk; ++u) {
        const int tap = j - u;
        if (tap < 0 || tap >= taps) continue;
        const T wt = window.weight[tap];
        a[u] += wt * s;
        b[u] += wt * t;
        p[u] += wt * ss;
        q[u] += wt * tt;
      }
    }
  } else {
    for (int tap = 0; tap < taps; ++tap)
      add_row_tap<Chunk, Input>(xs, ys, tap, window.weight[tap], NoWeight{}, c1, c2, a, b, p, q);
  }
  KSSIM_VECTORIZE
  for (int u = 0; u < Chunk; ++u) {
    if constexpr (Input == StagedPixels::SumDifference && Form == MomentForm::SumDifference) {
      out[0][u] = c1[u] + a[u];  // the centres are already u and w
      out[1][u] = c2[u] + b[u];
      out[2][u] = p[u] - a[u] * a[u];
      out[3][u] = q[u] - b[u] * b[u];
    } else if constexpr (Input == StagedPixels::SumDifference) {
      finish_from_sum_difference(c1[u], c2[u], a[u], b[u], p[u], q[u], out[0][u], out[1][u], out[2][u], out[3][u]);
    } else if constexpr (Form == MomentForm::Standard) {
      finish_moments(c1[u], c2[u], a[u], b[u], p[u], q[u], out[0][u], out[1][u], out[2][u], out[3][u]);
    } else {
      finish_sum_difference(c1[u], c2[u], a[u], b[u], p[u], q[u], out[0][u], out[1][u], out[2][u], out[3][u]);
    }
  }
}

// Combines the staged moments of a block of Rows x Chunk outputs along a strided axis: tile rows
// j0 .. j0+Rows-1 (output q uses staged rows j0+q .. j0+q+window-1), columns i0 .. i0+Chunk-1.
// With a compile-time tap count the Rows outputs of a column share one centre, the staged row at the
// middle of their windows: it is within Rows/2 rows of each window's own centre, and sharing it lets
// every staged row's deviations be formed once and reused by all Rows outputs.
// Form: the form of the staged planes (the output is always Standard).
template <int Rows, int Chunk, int Taps, MomentForm Form = MomentForm::Standard, class Scratch, class Window, class T>
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
    const StagedMoments<T> r(tile, j0 + s, i0);
    if constexpr (shared) {
      // This staged row's sums and differences (A, B, P, Q terms above), formed once for every output
      // that uses it.
      T su[Chunk], tw[Chunk], pu[Chunk], qw[Chunk];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) {
        if constexpr (Form == MomentForm::Standard) {
          sum_and_difference(r.m1[u], r.m2[u], c1[0][u], c2[0][u], su[u], tw[u]);
          pu[u] = (r.vs[u] + 2 * r.cv[u]) + su[u] * su[u];  // Var_u of the staged row + s^2
          qw[u] = (r.vs[u] - 2 * r.cv[u]) + tw[u] * tw[u];  // Var_w + t^2: exactly 0 for identical images
        } else {  // planes (m1 + m2, m1 - m2, Var_u, Var_w), centres likewise
          su[u] = r.m1[u] - c1[0][u];
          tw[u] = r.m2[u] - c2[0][u];
          pu[u] = r.vs[u] + su[u] * su[u];
          qw[u] = r.cv[u] + tw[u] * tw[u];
        }
      }
      for (int q = 0; q < Rows; ++q) {
        const int t = s - q;  // tap of staged row s for output q
        if (t < 0 || t >= taps) continue;
        const T wt = window.weight[t];
        KSSIM_VECTORIZE
        for (int u = 0; u < Chunk; ++u) {
          acc[0][q][u] += wt * su[u];
          acc[1][q][u] += wt * tw[u];
          acc[2][q][u] += wt * pu[u];
          acc[3][q][u] += wt * qw[u];
        }
      }
    } else {
      for (int q = 0; q < Rows; ++q) {
        const int t = s - q;
        if (t < 0 || t >= taps) continue;
        const T wt = window.weight[t];
        for (int u = 0; u < Chunk; ++u) {
          if constexpr (Form == MomentForm::Standard) {
            add_staged_moments(wt, r.m1[u], r.m2[u], r.vs[u], r.cv[u], c1[q][u], c2[q][u], acc[0][q][u], acc[1][q][u],
                               acc[2][q][u], acc[3][q][u]);
          } else {
            const T su = r.m1[u] - c1[q][u], tw = r.m2[u] - c2[q][u];
            acc[0][q][u] += wt * su;
            acc[1][q][u] += wt * tw;
            acc[2][q][u] += wt * (r.vs[u] + su * su);
            acc[3][q][u] += wt * (r.cv[u] + tw * tw);
          }
        }
      }
    }
  }
  for (int q = 0; q < Rows; ++q) {
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u) {
      if constexpr (Form == MomentForm::Standard)
        finish_moments(c1[q][u], c2[q][u], acc[0][q][u], acc[1][q][u], acc[2][q][u], acc[3][q][u], out[0][q][u],
                       out[1][q][u], out[2][q][u], out[3][q][u]);
      else
        finish_from_sum_difference(c1[q][u], c2[q][u], acc[0][q][u], acc[1][q][u], acc[2][q][u], acc[3][q][u],
                                   out[0][q][u], out[1][q][u], out[2][q][u], out[3][q][u]);
    }
  }
}

}  // namespace kssim::impl
