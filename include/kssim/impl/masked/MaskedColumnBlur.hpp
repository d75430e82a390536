// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Not ColumnBlur with a Term: the map pass sums two values per team (w * map and w) and weighs the partials,
// and normalized statistics combine five planes. What is the same is shared: the tile names and launch
// (StageKernel.hpp) and a team's staging, loops and sums (run_forward_axis_pass, ColumnBlur.hpp), which call
// this pass's combine, evaluate and store_sums.
// Forward stage 2 of masked SSIM: ColumnBlur.hpp's strided-axis pass for masks.
//  - MaskMode::Normalized, ColumnOutput::Statistics: the H pass of a volume, five planes in and out
//    (MaskedMoments.hpp).
//  - ColumnOutput::Map (both modes): the last forward pass. It combines the planes (four of SSIM's own
//    statistics, or five normalized ones), evaluates the SSIM map, and weighs every map pixel by the mask at
//    its window's centre, w. It writes the map (SSIM's values, unweighted), the partial derivatives of the
//    weighted sum (w times the map's, and for normalized statistics also over B(m), the window's mask
//    weight, which the statistics were divided by: d mu / dx = k m / B(m)), and per team the sums of w * map
//    and of w, summed later in a fixed order (Reduction.hpp).
// Map pixels of weight 0 contribute exactly nothing (selects: their map values may be NaN where masked data
// is). With normalized statistics a window without any pixel of weight > 0 has the map value 0 (its centre
// has weight 0, so it never counts).

#include <kssim/Options.hpp>
#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/stages/ColumnBlur.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tuning.hpp>
#include <kssim/impl/stages/LocalMoments.hpp>
#include <kssim/impl/stages/MapFormula.hpp>
#include <kssim/impl/masked/MaskedMoments.hpp>
#include <kssim/impl/stages/Reduction.hpp>
#include <kssim/impl/stages/StageKernel.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// The two sums a team of the masked map pass reduces.
struct WeightedSum {
  double value = 0, weight = 0;
  KOKKOS_INLINE_FUNCTION WeightedSum& operator+=(const WeightedSum& o) {
    value += o.value;
    weight += o.weight;
    return *this;
  }
};

}  // namespace kssim::impl

namespace Kokkos {
template <>
struct reduction_identity<kssim::impl::WeightedSum> {
  KOKKOS_FORCEINLINE_FUNCTION static kssim::impl::WeightedSum sum() { return {}; }
};
}  // namespace Kokkos

namespace kssim::impl {

// S: the mask's storage type, O: the map's (Storage.hpp; the images' and the map's of a 16-bit problem).
template <class ExecSpace, class T, MaskMode Mode, ColumnOutput Output, class S = T, class O = T>
struct MaskedColumnBlur {
  static_assert(Mode == MaskMode::Normalized || Output == ColumnOutput::Map,
                "with map weights the statistics are SSIM's own: ColumnBlur<Statistics>");
  KSSIM_AXIS_STAGE_TILES(ExecSpace, T);
  static constexpr bool normalized = Mode == MaskMode::Normalized;
  static constexpr int planes = normalized ? masked_planes : moment_planes;
  static constexpr ColumnOutput output = Output;
  static constexpr int staged_planes = planes;
  using MapSum = WeightedSum;  // a team's sums of w * map and of w

  // Only pointers, extents and PODs (KernelArrays.hpp). The inputs:
  PlaneArray<T> in;            // `planes` planes
  const T* shifts = nullptr;   // (NC, 2), Recentring.hpp
  GaussianWindow<T> window;
  AxisPass a;
  Geometry g;
  T c1 = 0, c2 = 0;
  InputArray<S> mask;          // Map: (N, C, D, H, W), channels possibly broadcast
  // The outputs:
  PlaneArray<T> out_stats;     // Statistics: five planes
  OutputArray<O> map;          // Map: optional (null data to skip)
  PlaneArray<T> partials;      // Map: optional, see PartialPlanes
  PartialPlanes wanted;
  MapSums sums;                // Map: one partial sum of w * map, and of w (sums.weights), per team

  KOKKOS_INLINE_FUNCTION int halo_len() const { return a.tile_len + window.size - 1; }
  std::size_t scratch_bytes() const { return AxisScratch<ExecSpace, T>::bytes(planes, halo_len()); }

  template <int Taps>  // see FixedTaps.hpp: run_forward_axis_pass with the combine, evaluate and store_sums below
  KOKKOS_FUNCTION void run(const Team& team) const { run_forward_axis_pass<ExecSpace, T, Taps>(*this, team); }

  // The mask weights of the map pixels (outer, l, i + u), u < n, of this pass: the mask at their windows'
  // centres; 0 for u >= n. Images: one row of the mask (its address once per row, and for whole chunks one
  // unconditional loop); volumes: i is a flat (Ho, Wo) position, each pixel's own.
  KOKKOS_INLINE_FUNCTION void centre_weights(int outer, int l, int i, int n, T (&w)[chunk]) const {
    // map pixel -> input pixel at its window's centre, along each axis
    const int off_d = window.size / 2 - g.pad_d, off_h = window.size / 2 - g.pad_h, off_w = window.size / 2 - g.pad_w;
    if (g.volumetric) {
      for (int u = 0; u < chunk; ++u)
        w[u] = u < n ? to_compute<T>(mask(outer / g.c, outer % g.c, l + off_d, (i + u) / g.ow + off_h,
                                          (i + u) % g.ow + off_w))
                     : T(0);
      return;
    }
    const S* row = &mask(outer / g.c, outer % g.c, 0, l + off_h, i + off_w);  // 2D: outer = n C + c (D = 1)
    const std::ptrdiff_t step = mask.stride(4);
    if (n == chunk) {
      KSSIM_VECTORIZE
      for (int u = 0; u < chunk; ++u) w[u] = to_compute<T>(row[u * step]);
    } else {
      for (int u = 0; u < chunk; ++u) w[u] = u < n ? to_compute<T>(row[u * step]) : T(0);
    }
  }

  template <int Taps>
  KOKKOS_FORCEINLINE_FUNCTION WeightedSum evaluate(const Scratch& tile, const AxisTilePosition& p, int j0, int i0,
                                                   T s1, T s2) const {
    T acc[planes][rows][chunk];
    if constexpr (normalized)
      combine_masked_axis_tile<rows, chunk, Taps>(tile, window, j0, i0, acc);
    else
      combine_axis_tile<rows, chunk, Taps>(tile, window, j0, i0, acc);
    const int nu = p.i0 + i0 + chunk <= a.inner ? chunk : a.inner - p.i0 - i0;
    WeightedSum sum;
    for (int q = 0; q < rows; ++q) {
      const int l = p.l0 + j0 + q;
      if (l >= a.len_out) continue;
      const std::size_t idx = a.out_index(p.outer, l, p.i0 + i0);
      T value[chunk], w[chunk];
      centre_weights(p.outer, l, p.i0 + i0, nu, w);
      // select_value (Vectorize.hpp), not ?:, so that hosts vectorise the map formula's divisions.
      if (wanted.any()) {
        T d_var[chunk], d_cov[chunk], d_m1[chunk], d_m2[chunk];
        KSSIM_VECTORIZE
        for (int u = 0; u < chunk; ++u) {
          const MapAndPartials<T> r =
              ssim_map_and_partials(acc[0][q][u], acc[1][q][u], acc[2][q][u], acc[3][q][u], s1, s2, c1, c2);
          value[u] = select_value(!empty_window(acc, q, u), r.map, T(0));
          // d (w * map) / d (statistics), and through the normalisation by B(m); 0 where w is 0 (its map may be
          // NaN where masked data is).
          const T f = normalized ? w[u] / safe_weight(acc[planes - 1][q][u]) : w[u];
          const bool counts = (w[u] > T(0)) & !empty_window(acc, q, u);  // &: no branch
          d_var[u] = select_value(counts, f * r.d_var, T(0));
          d_cov[u] = select_value(counts, f * r.d_cov, T(0));
          d_m1[u] = select_value(counts, f * r.d_m1, T(0));
          d_m2[u] = select_value(counts, f * r.d_m2, T(0));
        }
        store_chunk<chunk>(&partials(0, idx), d_var, nu);
        store_chunk<chunk>(&partials(1, idx), d_cov, nu);
        if (wanted.image1) store_chunk<chunk>(&partials(2, idx), d_m1, nu);
        if (wanted.image2) store_chunk<chunk>(&partials(wanted.image1 ? 3 : 2, idx), d_m2, nu);
      } else {
        KSSIM_VECTORIZE
        for (int u = 0; u < chunk; ++u)
          value[u] = select_value(!empty_window(acc, q, u),
                                  ssim_map_value(acc[0][q][u], acc[1][q][u], acc[2][q][u], acc[3][q][u], s1, s2, c1, c2),
                                  T(0));
      }
      if (map.data() != nullptr) store_map(p.outer, std::size_t(l) * a.inner + p.i0 + i0, value, nu);
      for (int u = 0; u < chunk; ++u) {
        if (u >= nu) continue;
        sum.value += w[u] > T(0) ? double(w[u]) * double(value[u]) : 0.0;
        sum.weight += double(w[u]);
      }
    }
    return sum;
  }

  // Normalized statistics: a window whose pixels all have weight 0.
  KOKKOS_FORCEINLINE_FUNCTION static bool empty_window(const T (&acc)[planes][rows][chunk], int q, int u) {
    if constexpr (normalized)
      return !(acc[planes - 1][q][u] > T(0));
    else
      return false;
  }

  // `pos` is the flat position inside the (Do, Ho, Wo) map of slice `nc` of the first of n values.
  KOKKOS_FORCEINLINE_FUNCTION void store_map(int nc, std::size_t pos, const T (&value)[chunk], int n) const {
    for (int u = 0; u < chunk; ++u) {
      if (u >= n) continue;
      const int ow = int((pos + u) % g.ow), rest = int((pos + u) / g.ow);
      map(nc / g.c, nc % g.c, rest / g.oh, rest % g.oh, ow) = to_storage<O>(value[u]);
    }
  }

  // Statistics (normalized): the five planes of a block of outputs (tile rows j0.., tile columns i0..).
  template <int Taps>
  KOKKOS_FORCEINLINE_FUNCTION void combine(const Scratch& tile, int j0, int i0,
                                           T (&m)[masked_planes][rows][chunk]) const {
    combine_masked_axis_tile<rows, chunk, Taps>(tile, window, j0, i0, m);
  }
  KOKKOS_INLINE_FUNCTION void store_sums(int team, const WeightedSum& sum) const {
    store_tile_sum(sums, team, sum.value);
    sums.weights.tile_sums[team] = sum.weight;
  }
};

template <class ExecSpace, class T, MaskMode Mode, ColumnOutput Output, class S, class O>
void masked_column_blur(const ExecSpace& exec, const Options& opts,
                        const MaskedColumnBlur<ExecSpace, T, Mode, Output, S, O>& k) {
  // The map pass's launch bound, bytes of value per team: normalized statistics KSSIM_TUNE_NORMALIZED_MAP_PASS_MIN_TEAMS
  // (Tuning.hpp), map weights 16 as column_blur's (at 8, 1.08-1.25x the time of their stage forward, H100); the
  // statistics pass none, as column_blur's.
  constexpr bool normalized_map = Mode == MaskMode::Normalized && Output == ColumnOutput::Map;
  constexpr int bytes = normalized_map ? KSSIM_TUNE_NORMALIZED_MAP_PASS_MIN_TEAMS : 16;
  constexpr int min_teams = Output == ColumnOutput::Map ? Kokkos::max(1, int(bytes / sizeof(T))) : 1;
  const char* name = Output == ColumnOutput::Map ? "kssim::masked_column_blur_map" : "kssim::masked_column_blur_stats";
  launch_stage<min_teams>(name, exec, opts, k, k.a.league_size(), k.a.tile_len, k.tile_inner);
}

}  // namespace kssim::impl
