#pragma once
// Mask values must lie in [0, 1] (NaN is not allowed). Checked on the device in every masked forward pass,
// without synchronising: a bad value raises a flag that makes the mean NaN ("never a plausible number"), and
// the one-call functions turn the flag into std::invalid_argument. One thread per row of the mask; the flag
// is an integer (an integer atomic: every writer writes the same 1, so the result does not depend on order).

#include <kssim/impl/KernelArrays.hpp>
#include <kssim/impl/Launch.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// Only pointers, extents and PODs (KernelArrays.hpp).
template <class T>
struct MaskCheck {
  InputArray<T> mask;  // as given: (N, 1 or C, D, H, W)
  unsigned* invalid = nullptr;

  KOKKOS_FUNCTION void operator()(int r) const {
    const int h = mask.extent(3), d = mask.extent(2), c = mask.extent(1);
    const int hh = r % h, rest = r / h, dd = rest % d, nc = rest / d;
    for (int w = 0; w < mask.extent(4); ++w) {
      const T m = mask(nc / c, nc % c, dd, hh, w);
      if (!(m >= T(0) && m <= T(1))) {
        Kokkos::atomic_max(invalid, 1u);
        return;
      }
    }
  }
};

template <class ExecSpace, class T>
void check_mask_values(const ExecSpace& exec, const MaskCheck<T>& k) {
  const int rows = k.mask.extent(0) * k.mask.extent(1) * k.mask.extent(2) * k.mask.extent(3);
  launch("kssim::check_mask", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows), k);
}

}  // namespace kssim::impl
