// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Mask values must lie in [0, 1] (NaN is not allowed). Checked on the device in every masked forward pass,
// without synchronising: a bad value raises a flag that makes the mean NaN ("never a plausible number"), and
// the one-call functions turn the flag into std::invalid_argument. The flag is an integer (an integer atomic:
// every writer writes the same 1, so the result does not depend on order).

#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// Only pointers, extents and PODs (KernelArrays.hpp). A packed mask (strides those of a contiguous
// (N, C, D, H, W) array, as PyTorch's and LayoutRight's) is checked as one flat run of values with no index
// arithmetic: on GPUs each work item checks `chunk` values `items` apart (at each step consecutive threads read
// consecutive values, coalesced), on hosts a run of `chunk` consecutive values (vectorised). Other masks go row
// by row, each work item a run of `row_chunk` values of one row. (A value per thread with the row index
// divided out of it made this check 19.6 us of a 1x3x1080x1920 masked forward on an H100, 8 MB of mask.)
// S: the mask's storage type (Storage.hpp); 16-bit values are compared as floats.
template <class ExecSpace, class S>
struct MaskCheck {
  static constexpr int chunk = gpu_code_paths_v<ExecSpace> ? 8 : 64;
  static constexpr int row_chunk = gpu_code_paths_v<ExecSpace> ? 1 : 64;
  InputArray<S> mask;  // as given: (N, 1 or C, D, H, W)
  unsigned* invalid = nullptr;
  std::size_t values = 0;  // packed: how many
  std::size_t items = 0;   // packed: work items (values / chunk, rounded up); 0: not packed, row by row

  MaskCheck() = default;
  MaskCheck(const InputArray<S>& m, unsigned* flag) : mask(m), invalid(flag) {
    std::ptrdiff_t stride = 1;
    bool packed = true;
    for (int i = 4; i >= 0; --i) {
      packed = packed && (m.ext[i] == 1 || m.str[i] == stride);
      stride *= m.ext[i];
    }
    if (packed) {
      values = std::size_t(stride);
      items = (values + chunk - 1) / chunk;
    }
  }

  KOKKOS_INLINE_FUNCTION static bool valid(const S& m) {  // false for NaN
    using T = compute_type_t<S>;
    const T v = to_compute<T>(m);
    return v >= T(0) && v <= T(1);
  }
  KOKKOS_INLINE_FUNCTION int runs_per_row() const { return (mask.extent(4) + row_chunk - 1) / row_chunk; }
  // Work items of the launch.
  std::size_t count() const {
    if (items != 0) return items;
    return std::size_t(mask.extent(0)) * mask.extent(1) * mask.extent(2) * mask.extent(3) * runs_per_row();
  }

  // `ok &= valid(...)`, not `ok = ok && valid(...)`: without the short circuit every load of the run is issued at
  // once instead of each waiting on the previous value's test.
  KOKKOS_FUNCTION void operator()(std::size_t e) const {
    bool ok = true;
    if (items != 0) {
      const S* v = mask.data();
      if constexpr (gpu_code_paths_v<ExecSpace>) {
        for (int j = 0; j < chunk; ++j) {
          const std::size_t i = e + j * items;
          if (i < values) ok &= valid(v[i]);
        }
      } else {
        const std::size_t end = Kokkos::min(e * chunk + chunk, values);
        for (std::size_t i = e * chunk; i < end; ++i) ok &= valid(v[i]);
      }
    } else {
      std::size_t r = e / runs_per_row();
      const int h = int(r % mask.extent(3));
      r /= mask.extent(3);
      const int d = int(r % mask.extent(2));
      r /= mask.extent(2);
      const int c = int(r % mask.extent(1)), n = int(r / mask.extent(1));
      const S* row = &mask(n, c, d, h, 0);
      const int w0 = int(e % runs_per_row()) * row_chunk, w1 = Kokkos::min(w0 + row_chunk, mask.extent(4));
      for (int w = w0; w < w1; ++w) ok &= valid(row[w * mask.stride(4)]);
    }
    if (!ok) Kokkos::atomic_max(invalid, 1u);
  }
};

template <class ExecSpace, class S>
void check_mask_values(const ExecSpace& exec, const MaskCheck<ExecSpace, S>& k) {
  launch("kssim::check_mask", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::size_t>>(exec, 0, k.count()), k);
}

}  // namespace kssim::impl
