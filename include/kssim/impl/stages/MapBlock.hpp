// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The last step of every forward schedule: the SSIM map of a block of Rows x Chunk outputs from their
// window moments (LocalMoments.hpp), with the partial derivatives the backward pass needs (MapFormula.hpp).
// The formula runs branch-free over whole chunks (vectorised on hosts); only the stores stop at the edge.

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/stages/LocalMoments.hpp>
#include <kssim/impl/stages/MapTerms.hpp>
#include <kssim/impl/stages/RawWindow.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Vectorize.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// Which partial-derivative planes a forward pass writes, in this order: d_var, d_cov, then d_m1 and/or
// d_m2 when the gradient of image 1 and/or image 2 is wanted.
struct PartialPlanes {
  bool image1 = false, image2 = false;
  KOKKOS_INLINE_FUNCTION int count() const { return 2 + int(image1) + int(image2); }
  KOKKOS_INLINE_FUNCTION bool any() const { return image1 || image2; }
};

// The weight of each map pixel in the mean: Unweighted (SSIM, MS-SSIM: every pixel once), or a type with
// `static constexpr bool weighted = true` whose load_row(q, nu, w) gives the weights of the block's row q,
// columns 0 .. nu - 1 (masked SSIM's map weights: MaskAtCentre below). A weighted block multiplies its partial
// derivatives by the weight (those of w * map), sums w * map, and adds its weights to weight_sum unless the
// type's sums_weights is false (their sums taken elsewhere); a pixel of weight 0 contributes exactly nothing
// (selects: its map value may be NaN where masked-out data is).
struct Unweighted {
  static constexpr bool weighted = false, sums_weights = false;
  template <int Chunk, class T>
  KOKKOS_FORCEINLINE_FUNCTION void load_row(int, int, T (&)[Chunk]) const {}
};

// Map weights read from a mask: block row q, column u weighs mask(n, c, 0, h0 + q, w0 + u), the input pixel
// at the window's centre of the block's output (q, u) (2D images); a mask of 16-bit storage S (Storage.hpp) is
// converted where it is loaded.
template <class T, class S = T>
struct MaskAtCentre {
  static constexpr bool weighted = true, sums_weights = true;
  InputArray<S> mask;
  int n = 0, c = 0, h0 = 0, w0 = 0;
  // One row's address per row, then a strided run along it (the 5-D index arithmetic once per row, not per pixel).
  template <int Chunk>
  KOKKOS_FORCEINLINE_FUNCTION void load_row(int q, int nu, T (&w)[Chunk]) const {
    const S* row = &mask(n, c, 0, h0 + q, w0);
    const std::ptrdiff_t stride = mask.stride(4);
    for (int u = 0; u < Chunk; ++u) w[u] = u < nu ? to_compute<T>(row[u * stride]) : T(0);
  }
};

// Map weights loaded earlier (Weight::load_row into w), handed out row by row.
template <class T, int Rows, int Chunk>
struct LoadedWeights {
  static constexpr bool weighted = true, sums_weights = true;
  T w[Rows][Chunk];
  template <class Weight>
  KOKKOS_FORCEINLINE_FUNCTION LoadedWeights(const Weight& weight, int rows_valid, int nu) {
    for (int q = 0; q < Rows; ++q) weight.load_row(q, q < rows_valid ? nu : 0, w[q]);
  }
  KOKKOS_FORCEINLINE_FUNCTION void load_row(int q, int, T (&out)[Chunk]) const {
    for (int u = 0; u < Chunk; ++u) out[u] = w[q][u];
  }
};

// Map weights staged in scratch, 0 outside the map, whose sums were taken as they were staged: block row q,
// column u at first[q * pitch + u] (the fused forward's KSSIM_TUNE_FUSED_WEIGHTS_STAGED, Tuning.hpp).
template <class T>
struct StagedWeights {
  static constexpr bool weighted = true, sums_weights = false;
  const T* first = nullptr;
  int pitch = 0;
  template <int Chunk>
  KOKKOS_FORCEINLINE_FUNCTION void load_row(int q, int, T (&w)[Chunk]) const {
    for (int u = 0; u < Chunk; ++u) w[u] = first[q * pitch + u];
  }
};

// Evaluates the map (Term: SSIM's, or MS-SSIM's contrast-structure term, MapTerms.hpp) of the block whose
// moments are m (rows_valid rows and nu columns of it inside the map), stores the partial derivatives of row
// q at partials(k, first_partial(q) + u) when any are wanted, hands each row's values to store_map(q, values),
// and returns the sum of the map over the valid outputs. Raw: the moments are turned into the raw window's
// first (Window::Float32, RawWindow.hpp). Only RawWindowTerm's kernels contain that code: in the same
// kernel it made the register allocator spill in Window::Exact's fused forward too (sm_90, ptxas -v).
template <int Rows, int Chunk, class Term, bool Raw, class T, class FirstPartial, class StoreMap, class Weight>
KOKKOS_FORCEINLINE_FUNCTION double evaluate_map_block_as(const T (&m)[moment_planes][Rows][Chunk], int rows_valid,
                                                         int nu, T s1, T s2, T c1, T c2, const RawWindow<T>& raw,
                                                         const PartialPlanes& wanted, const PlaneArray<T>& partials,
                                                         const FirstPartial& first_partial, const StoreMap& store_map,
                                                         const Weight& weight, double& weight_sum) {
  double sum = 0;
  const bool any_partial = wanted.any();
  for (int q = 0; q < Rows; ++q) {
    // Rows past the map's edge are evaluated too (their staged moments are defined, the schedules stage
    // whole tiles): only their stores and sum stop. A branch around each row cost ~7 instructions per output
    // pixel in the fused forward (sm_90), where nearly every block is whole.
    const bool row_valid = q < rows_valid;
    // The moments the term is evaluated on: the blur's, or once turned into the raw window's (then with
    // shift 0), the same for the map alone and the map with partials.
    T mm[moment_planes][Chunk];
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u) {
      for (int k = 0; k < moment_planes; ++k) mm[k][u] = m[k][q][u];
      if constexpr (Raw) raw.to_raw(mm[0][u], mm[1][u], mm[2][u], mm[3][u], s1, s2);
    }
    const T t1 = Raw ? T(0) : s1, t2 = Raw ? T(0) : s2;
    T value[Chunk];
    [[maybe_unused]] T w[Chunk];  // Weight::weighted: the map weights, 0 outside the map
    if constexpr (Weight::weighted) weight.load_row(q, row_valid ? nu : 0, w);
    if (any_partial) {
      T d_var[Chunk], d_cov[Chunk], d_m1[Chunk], d_m2[Chunk];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) {
        MapAndPartials<T> r = Term::value_and_partials(mm[0][u], mm[1][u], mm[2][u], mm[3][u], t1, t2, c1, c2);
        if constexpr (Raw) r = raw.from_raw(r, s1, s2);
        value[u] = r.map;
        d_var[u] = r.d_var;
        d_cov[u] = r.d_cov;
        d_m1[u] = r.d_m1;
        d_m2[u] = r.d_m2;
      }
      if constexpr (Weight::weighted) {  // the partials of w * map; exactly 0 where w is 0
        KSSIM_VECTORIZE
        for (int u = 0; u < Chunk; ++u) {
          const bool counts = w[u] > T(0);
          d_var[u] = select_value(counts, w[u] * d_var[u], T(0));
          d_cov[u] = select_value(counts, w[u] * d_cov[u], T(0));
          d_m1[u] = select_value(counts, w[u] * d_m1[u], T(0));
          d_m2[u] = select_value(counts, w[u] * d_m2[u], T(0));
        }
      }
      if (row_valid) {
        const std::size_t idx = first_partial(q);
        store_chunk<Chunk>(&partials(0, idx), d_var, nu);
        store_chunk<Chunk>(&partials(1, idx), d_cov, nu);
        if (wanted.image1) store_chunk<Chunk>(&partials(2, idx), d_m1, nu);
        if (wanted.image2) store_chunk<Chunk>(&partials(wanted.image1 ? 3 : 2, idx), d_m2, nu);
      }
    } else {
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) value[u] = Term::value(mm[0][u], mm[1][u], mm[2][u], mm[3][u], t1, t2, c1, c2);
    }
    if (row_valid) store_map(q, value);
    if constexpr (Weight::weighted) {
      for (int u = 0; u < Chunk; ++u) {
        sum += w[u] > T(0) ? double(w[u]) * double(value[u]) : 0.0;
        if constexpr (Weight::sums_weights) weight_sum += double(w[u]);
      }
    } else {
      for (int u = 0; u < Chunk; ++u) sum += row_valid && u < nu ? double(value[u]) : 0.0;  // + 0.0: exact
    }
  }
  return sum;
}

// The map of a block: Term's, or for RawWindowTerm<Term> (Window::Float32) Term's of the raw window's
// moments, whose total weight is `window`'s raw_scale.
// Weight: Unweighted, or map weights (above), whose sum over the block's valid outputs is added to weight_sum.
template <int Rows, int Chunk, class Term = SsimTerm, class T, class FirstPartial, class StoreMap,
          class Weight = Unweighted>
KOKKOS_FORCEINLINE_FUNCTION double evaluate_map_block(const T (&m)[moment_planes][Rows][Chunk], int rows_valid, int nu,
                                                      T s1, T s2, T c1, T c2, const GaussianWindow<T>& window,
                                                      const PartialPlanes& wanted, const PlaneArray<T>& partials,
                                                      const FirstPartial& first_partial, const StoreMap& store_map,
                                                      const Weight& weight = {}, double* weight_sum = nullptr) {
  const RawWindow<T> raw{window.raw_scale, window.raw_deficit};
  double unused = 0;
  double& weights = Weight::weighted ? *weight_sum : unused;
  if constexpr (is_raw_window_term_v<Term>)
    return evaluate_map_block_as<Rows, Chunk, typename Term::base, true>(
        m, rows_valid, nu, s1, s2, c1, c2, raw, wanted, partials, first_partial, store_map, weight, weights);
  else
    return evaluate_map_block_as<Rows, Chunk, Term, false>(m, rows_valid, nu, s1, s2, c1, c2, raw, wanted, partials,
                                                           first_partial, store_map, weight, weights);
}

}  // namespace kssim::impl
