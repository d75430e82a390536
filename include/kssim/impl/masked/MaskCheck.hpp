// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Mask values must lie in [0, 1] (NaN is not allowed). Checked on the device in every masked forward pass,
// without synchronising: a bad value raises a flag that makes the mean NaN ("never a plausible number"), and
// the one-call functions turn the flag into std::invalid_argument. The flag is an integer (an integer atomic:
// every writer writes the same 1, so the result does not depend on order).

#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// Only pointers, extents and PODs (KernelArrays.hpp). Each work item checks a run of `chunk` consecutive
// values of one row (GPUs: one value, consecutive threads on consecutive values, coalesced).
template <class ExecSpace, class T>
struct MaskCheck {
  static constexpr int chunk = gpu_code_paths_v<ExecSpace> ? 1 : 64;
  InputArray<T> mask;  // as given: (N, 1 or C, D, H, W)
  unsigned* invalid = nullptr;

  KOKKOS_INLINE_FUNCTION int runs_per_row() const { return (mask.extent(4) + chunk - 1) / chunk; }

  KOKKOS_FUNCTION void operator()(int e) const {
    int r = e / runs_per_row();
    const int h = r % mask.extent(3);
    r /= mask.extent(3);
    const int d = r % mask.extent(2);
    r /= mask.extent(2);
    const int c = r % mask.extent(1), n = r / mask.extent(1);
    const T* row = &mask(n, c, d, h, 0);
    const int w0 = e % runs_per_row() * chunk, w1 = Kokkos::min(w0 + chunk, mask.extent(4));
    bool ok = true;
    for (int w = w0; w < w1; ++w) {
      const T m = row[w * mask.stride(4)];
      ok = ok && m >= T(0) && m <= T(1);  // false for NaN
    }
    if (!ok) Kokkos::atomic_max(invalid, 1u);
  }
};

template <class ExecSpace, class T>
void check_mask_values(const ExecSpace& exec, const MaskCheck<ExecSpace, T>& k) {
  const int rows = k.mask.extent(0) * k.mask.extent(1) * k.mask.extent(2) * k.mask.extent(3);
  launch("kssim::check_mask", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows * k.runs_per_row()), k);
}

}  // namespace kssim::impl
