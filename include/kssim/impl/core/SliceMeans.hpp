// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Per-image and per-channel results from per-(n, c) slice sums, written into the caller's Views:
//   per_image[n]      = sum_c sums[n C + c] / sum_c weights[n C + c]
//   per_channel[n, c] = sums[n C + c] / weights[n C + c]
// where `weights` is a device array of slice weights (masked SSIM: the mask's weight of each slice) or, when
// null, every slice weighs `count` (SSIM: its map pixels; MS-SSIM: 1). The lambdas capture raw pointers only.

#include <kssim/impl/core/Launch.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

struct SliceSums {
  const double* sums = nullptr;
  const double* weights = nullptr;  // null: `count` per slice
  double count = 1;
  int n = 0, c = 0;
  KOKKOS_INLINE_FUNCTION double weight(int nc) const { return weights ? weights[nc] : count; }
};

template <class ExecSpace, class PerImageView>
void write_per_image(const ExecSpace& exec, const SliceSums& s, const PerImageView& per_image) {
  typename PerImageView::value_type* out = per_image.data();
  const std::ptrdiff_t stride = per_image.stride(0);
  launch("kssim::write_per_image", Kokkos::RangePolicy<ExecSpace>(exec, 0, s.n), KOKKOS_LAMBDA(int n) {
    double sum = 0, weight = 0;
    for (int c = 0; c < s.c; ++c) {
      sum += s.sums[n * s.c + c];
      weight += s.weight(n * s.c + c);
    }
    out[n * stride] = typename PerImageView::value_type(sum / weight);
  });
}

template <class ExecSpace, class PerChannelView>
void write_per_channel(const ExecSpace& exec, const SliceSums& s, const PerChannelView& per_channel) {
  typename PerChannelView::value_type* out = per_channel.data();
  const std::ptrdiff_t stride_n = per_channel.stride(0), stride_c = per_channel.stride(1);
  launch("kssim::write_per_channel", Kokkos::RangePolicy<ExecSpace>(exec, 0, s.n * s.c), KOKKOS_LAMBDA(int nc) {
    out[nc / s.c * stride_n + nc % s.c * stride_c] = typename PerChannelView::value_type(s.sums[nc] / s.weight(nc));
  });
}

}  // namespace kssim::impl
