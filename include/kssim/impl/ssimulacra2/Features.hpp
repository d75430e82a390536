// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Stage 6: the per-column sums of every scale -> the 108 features of each image (1-norm: mean; 4-norm:
// fourth root of the mean fourth power) -> the weighted sum -> the score. Each feature is one sequential
// sum over the columns of its scale, in column order: bitwise reproducible. Features are stored in the
// order of the weights: channel, scale, norm, map. RangePolicy kernels (one thread per feature, then one
// per image); the work is a few thousand additions per feature.
// (Functors hold raw pointers and PODs only: see Planes.hpp.)

#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/ssimulacra2/Constants.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace kssim::impl::s2 {

// Where scale s's column sums start and how many columns and pixels it has; scales of the image.
struct ScaleSums {
  std::int64_t offset[num_scales];
  int columns[num_scales];
  double pixels[num_scales];
  int scales;  // scale_count(): the features of the scales after it are 0
};

struct FeatureFunctor {
  const double* col_sums;  // per scale: (n * 3, num_stats, columns)
  double* features;        // (n, num_features)
  ScaleSums layout;
  int images;
  KOKKOS_INLINE_FUNCTION void operator()(int idx) const {
    const int n = idx / num_features, f = idx % num_features;
    const int map = f % 3, norm = (f / 3) % 2, s = (f / 6) % num_scales, c = f / (6 * num_scales);
    if (s >= layout.scales) {
      features[idx] = 0.0;
      return;
    }
    const int stat = map * 2 + norm, cols = layout.columns[s];
    const double* sums = col_sums + layout.offset[s] + (std::int64_t(n * 3 + c) * num_stats + stat) * cols;
    double sum = 0.0;
    for (int j = 0; j < cols; ++j) sum += sums[j];
    const double mean = sum / layout.pixels[s];
    features[idx] = norm == 0 ? mean : Kokkos::sqrt(Kokkos::sqrt(mean));
  }
};

// The weights travel in the functor (a namespace-scope array is host memory to a GPU kernel).
struct WeightTable {
  double w[num_features];
};
inline WeightTable weight_table() {
  WeightTable t{};
  for (int i = 0; i < num_features; ++i) t.w[i] = weights[i];
  return t;
}

// The weighted sum in the tool's order. With fewer than six scales the tool still takes consecutive
// weights, channel by channel: feature (c, s, norm, map) of an image of S scales gets weight
// ((c S + s) 2 + norm) 3 + map, not its own six-scale weight (its calibration does not cover such images;
// kssim matches its numbers).
KOKKOS_INLINE_FUNCTION double score_from_features(const WeightTable& w, const double* f, int scales) {
  double s = 0.0;
  int i = 0;
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < scales * 2 * 3; ++k) s += w.w[i++] * Kokkos::fabs(f[c * num_scales * 2 * 3 + k]);
  using M = ScoreMapping;
  s *= M::scale;
  s = M::c1 * s + M::c2 * s * s + M::c3 * s * s * s;
  return s > 0.0 ? 100.0 - 10.0 * Kokkos::pow(s, M::exponent) : 100.0;
}

template <class Score>
struct ScoreFunctor {
  WeightTable weights;
  const double* features;
  Score* scores;  // one per image, strided
  std::int64_t stride;
  int scales;
  KOKKOS_INLINE_FUNCTION void operator()(int n) const {
    scores[n * stride] = Score(score_from_features(weights, features + std::int64_t(n) * num_features, scales));
  }
};

template <class ExecSpace, class Score>
void features_and_scores(const ExecSpace& exec, const double* col_sums, const ScaleSums& layout, int images,
                         double* features, Score* scores, std::int64_t score_stride) {
  launch("kssim::ssimulacra2::features", Kokkos::RangePolicy<ExecSpace>(exec, 0, images * num_features),
         FeatureFunctor{col_sums, features, layout, images});
  launch("kssim::ssimulacra2::scores", Kokkos::RangePolicy<ExecSpace>(exec, 0, images),
         ScoreFunctor<Score>{weight_table(), features, scores, score_stride, layout.scales});
}

}  // namespace kssim::impl::s2
