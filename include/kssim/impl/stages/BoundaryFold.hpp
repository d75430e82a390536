// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The last backward step under Reflect and Replicate padding: the gradients of the positions outside the
// image go to the pixels they read. The forward reads position p outside the image from pixel
// source(p) inside it (Geometry::source), so d mean / d x(i) sums the gradient of every position p with
// source(p) == i. The backward schedules compute the p == i term only (as for zero padding: their adjoint
// correlations cover the image); this pass adds the others, at the pixels near an edge:
//   grad(i) += factor * sum over p != i, source(p) == i, of (A_m(p) + 2 x'(i) A_var(p) + y'(i) A_cov(p))
// with A_k(p) = sum_o w(p - o) P_k(o), the adjoint correlation of partial plane k (MapBlock.hpp) at p, and the
// chain rule of GradientStore.hpp at the pixel that was read (its value is the one every such p staged).
// Work: (window / 2 + 1) pixels deep along each edge, each summing a few partial windows that reach past it;
// no two threads write the same pixel, in a fixed order: deterministic, no atomics.
// Gradients of a 16-bit type O (Storage.hpp) are rounded once: there the pass recomputes the whole gradient of
// its pixels (the p == i term too) and overwrites the backward's, adding it to the value the pixel held before
// the backward (saved by the same functor's save pass) when accumulating.

#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/UpstreamFactor.hpp>
#include <kssim/impl/stages/MapBlock.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

namespace kssim::impl {

// One spatial axis of the fold: n pixels, a map of len_out positions whose windows start `pad` positions
// before them; taps 1 for the depth of 2D images.
struct FoldAxis {
  int n = 1, len_out = 1, pad = 0, taps = 1;
  // Positions read outside the image: `before` ahead of pixel 0, `after` past pixel n - 1.
  KOKKOS_INLINE_FUNCTION int before() const { return pad; }
  KOKKOS_INLINE_FUNCTION int after() const { return Kokkos::max(0, len_out - 1 + taps - 1 - pad - (n - 1)); }
  // Pixels at each end that outside positions may read (a band over-approximating them: the others find none).
  KOKKOS_INLINE_FUNCTION int low_band() const { return before() > 0 ? Kokkos::min(n, before() + 1) : 0; }
  KOKKOS_INLINE_FUNCTION int high_band() const {
    return after() > 0 ? Kokkos::min(n - low_band(), after() + 1) : 0;
  }
  KOKKOS_INLINE_FUNCTION int band() const { return low_band() + high_band(); }
  KOKKOS_INLINE_FUNCTION int band_pixel(int b) const { return b < low_band() ? b : n - high_band() + (b - low_band()); }
};

template <class ExecSpace, class T, class S = T, class O = T>
struct BoundaryFold {
  // Only pointers, extents and PODs (KernelArrays.hpp).
  PlaneArray<T> partials;  // the forward's partial planes: d_var, d_cov, then d_m1 and/or d_m2
  PartialPlanes wanted;
  InputArray<S> x, y;
  OutputArray<O> grad1, grad2;  // either may be null; always added to (the backward wrote them)
  const T* shifts = nullptr;    // (NC, 2), Recentring.hpp
  UpstreamFactor upstream;
  const double* slice_factors = nullptr;
  double scale = 1;  // already divided by the map size
  GaussianWindow<T> window;  // the forward's (not reversed)
  Geometry g;
  FoldAxis ad, ah, aw;
  // 16-bit gradients: the frame's values before the backward, in frame order (null: not accumulating), and
  // whether this launch only saves them.
  O *saved1 = nullptr, *saved2 = nullptr;
  bool save_only = false;
  static constexpr bool whole = !std::is_same_v<O, T>;  // recompute the whole gradient (see above)

  // Sets the axes of geometry g (its padding must extend the image).
  void set_geometry(const Geometry& geometry) {
    g = geometry;
    ad = g.volumetric ? FoldAxis{g.d, g.od, g.pad_d, g.window} : FoldAxis{1, 1, 0, 1};
    ah = FoldAxis{g.h, g.oh, g.pad_h, g.window};
    aw = FoldAxis{g.w, g.ow, g.pad_w, g.window};
  }
  // Pixels of the frame over every (n, c) slice.
  long long frame_pixels() const { return (long long)g.images() * frame(); }

  // The frame of each (n, c) slice: depth bands (whole planes), then row bands of the other planes (whole
  // rows), then column bands of the other rows.
  KOKKOS_INLINE_FUNCTION long long frame_a() const { return (long long)ad.band() * g.h * g.w; }
  KOKKOS_INLINE_FUNCTION long long frame_b() const { return (long long)(g.d - ad.band()) * ah.band() * g.w; }
  KOKKOS_INLINE_FUNCTION long long frame_c() const {
    return (long long)(g.d - ad.band()) * (g.h - ah.band()) * aw.band();
  }
  KOKKOS_INLINE_FUNCTION long long frame() const { return frame_a() + frame_b() + frame_c(); }

  // The positions of the axis that read pixel i into p[], the others first, then i itself when `self`; returns
  // their count. Under Reflect one position at each end at most (p = -i, p = 2 (n - 1) - i), under Replicate
  // the whole margin at an end pixel (Geometry::source). Plain loops walk these lists (nested lambdas, one per
  // axis, were left as calls by the host compiler).
  static constexpr int max_readers = 2 * (max_window_size / 2) + 1;
  KOKKOS_INLINE_FUNCTION int readers(const FoldAxis& a, int i, bool self, int (&p)[max_readers]) const {
    const int n = a.n;
    int count = 0;
    if (g.padding == Padding::Reflect) {
      if (i >= 1 && i <= a.before()) p[count++] = -i;
      if (i <= n - 2 && i >= n - 1 - a.after()) p[count++] = 2 * (n - 1) - i;
    } else {
      if (i == 0)
        for (int q = -a.before(); q < 0; ++q) p[count++] = q;
      if (i == n - 1)
        for (int q = n; q < n + a.after(); ++q) p[count++] = q;
    }
    if (self) p[count++] = i;
    return count;
  }

  // The map positions o = p + pad - t of the axis whose windows cover position p: [first, last], tap t = p + pad - o.
  KOKKOS_INLINE_FUNCTION static int first_covering(const FoldAxis& a, int p) { return Kokkos::max(0, p + a.pad - (a.taps - 1)); }
  KOKKOS_INLINE_FUNCTION static int last_covering(const FoldAxis& a, int p) { return Kokkos::min(a.len_out - 1, p + a.pad); }

  KOKKOS_INLINE_FUNCTION std::size_t partial_index(int nc, int od, int oh, int ow) const {
    return g.volumetric ? ((std::size_t(nc) * g.od + od) * g.oh + oh) * g.ow + ow
                        : (std::size_t(nc) * g.oh + oh) * g.row_pitch + ow;
  }

  // acc[k] += A_k(p) over the positions p that read pixel (d, h, w) of slice nc (see the top); K planes.
  template <int K>
  KOKKOS_INLINE_FUNCTION void sum_readers(int nc, int d, int h, int w, T (&acc)[4]) const {
    const std::size_t plane = partials.plane_size;
    int pd[max_readers], ph[max_readers], pw[max_readers];
    const int nd = readers(ad, d, true, pd), nh = readers(ah, h, true, ph);
    for (int a = 0; a < nd; ++a)
      for (int b = 0; b < nh; ++b) {
        // The pixel's own position is the backward's (unless `whole`): the last of each list.
        const int nw = readers(aw, w, whole || a < nd - 1 || b < nh - 1, pw);
        for (int c = 0; c < nw; ++c) {
          const int ow0 = first_covering(aw, pw[c]), ow1 = last_covering(aw, pw[c]);
          const T* wt = &window.weight[pw[c] + aw.pad - ow0];  // the tap of column ow0 + j is wt[-j]
          for (int od = first_covering(ad, pd[a]); od <= last_covering(ad, pd[a]); ++od) {
            const T wd = g.volumetric ? window.weight[pd[a] + ad.pad - od] : T(1);
            for (int oh = first_covering(ah, ph[b]); oh <= last_covering(ah, ph[b]); ++oh) {
              const T wdh = wd * window.weight[ph[b] + ah.pad - oh];
              const T* row = partials.data() + partial_index(nc, od, oh, ow0);
              // Four columns' loads issued before their products: a GPU thread then waits on one load latency
              // per four columns rather than per column.
              int j = 0;
              for (; j + 4 <= ow1 - ow0 + 1; j += 4) {
                T v[K][4];
                for (int k = 0; k < K; ++k)
                  for (int u = 0; u < 4; ++u) v[k][u] = row[k * plane + j + u];
                for (int u = 0; u < 4; ++u)
                  for (int k = 0; k < K; ++k) acc[k] += wdh * wt[-(j + u)] * v[k][u];
              }
              for (; j <= ow1 - ow0; ++j)
                for (int k = 0; k < K; ++k) acc[k] += wdh * wt[-j] * row[k * plane + j];
            }
          }
        }
      }
  }

  KOKKOS_FUNCTION void operator()(long long e) const {
    // One 64-bit division per pixel; a slice's frame is less than 2^30 pixels (Plan.hpp's fits_one_call), so
    // the rest is 32-bit (a 64-bit division costs several 32-bit ones on hosts and GPUs).
    const long long per_slice = frame();
    const int nc = int(e / per_slice);
    int r = int(e - nc * per_slice);
    const int fa = int(frame_a()), fb = int(frame_b());
    int d, h, w;
    if (r < fa) {
      const int plane = g.h * g.w;
      d = ad.band_pixel(r / plane);
      r -= (r / plane) * plane;
      h = r / g.w;
      w = r - h * g.w;
    } else if ((r -= fa) < fb) {
      const int per_plane = ah.band() * g.w;
      const int q = r / per_plane;
      d = ad.low_band() + q;
      r -= q * per_plane;
      const int b = r / g.w;
      h = ah.band_pixel(b);
      w = r - b * g.w;
    } else {
      r -= fb;
      const int per_plane = (g.h - ah.band()) * aw.band();
      const int q = r / per_plane;
      d = ad.low_band() + q;
      r -= q * per_plane;
      const int row = r / aw.band();
      h = ah.low_band() + row;
      w = aw.band_pixel(r - row * aw.band());
    }
    const int n = nc / g.c, c = nc % g.c;
    if (save_only) {
      if (saved1) saved1[e] = grad1.data() != nullptr ? grad1(n, c, d, h, w) : O{};
      if (saved2) saved2[e] = grad2.data() != nullptr ? grad2(n, c, d, h, w) : O{};
      return;
    }
    // Sum the adjoint correlations of every other position that reads (d, h, w) (and its own: `whole`).
    constexpr int max_planes = 4;
    const int planes = wanted.count();
    T acc[max_planes] = {};
    if (planes == 4)
      sum_readers<4>(nc, d, h, w, acc);
    else
      sum_readers<3>(nc, d, h, w, acc);
    const T xs = to_compute<T>(x(n, c, d, h, w)) - shifts[2 * nc], ys = to_compute<T>(y(n, c, d, h, w)) - shifts[2 * nc + 1];
    const T factor = T(scale * upstream.value() * (slice_factors ? slice_factors[nc] : 1.0));
    const auto store = [&](O& gv, const O* saved, T v) {
      const T base = !whole ? to_compute<T>(gv) : saved ? to_compute<T>(saved[e]) : T(0);
      gv = to_storage<O>(base + v);
    };
    if (grad1.data() != nullptr)
      store(grad1(n, c, d, h, w), saved1, factor * (acc[2] + 2 * xs * acc[0] + ys * acc[1]));
    if (grad2.data() != nullptr)
      store(grad2(n, c, d, h, w), saved2, factor * (acc[planes - 1] + 2 * ys * acc[0] + xs * acc[1]));
  }
};

// Adds the outside positions' gradients (k's geometry set, its padding extending the image), or, with
// k.save_only, saves the frame's gradients first.
template <class ExecSpace, class T, class S, class O>
void boundary_fold(const ExecSpace& exec, const BoundaryFold<ExecSpace, T, S, O>& k) {
  const long long count = k.frame_pixels();
  if (count == 0) return;
  launch(k.save_only ? "kssim::boundary_save" : "kssim::boundary_fold",
         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long long>>(exec, 0, count), k);
}

}  // namespace kssim::impl
