// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The window's tap count as a compile-time constant for GPU kernels.
//
// The GPU kernels are limited by instruction issue, not by memory (Nsight Compute: 63-76% of the SM's
// issue rate, 20-40% of DRAM bandwidth). With a constant tap count every tap loop unrolls completely:
// the window weights become constant-bank operands of the multiply-adds (no load per tap), the
// register-blocked loops lose their per-tap bounds tests, and staged values shared by neighbouring
// outputs are loaded once. The common window sizes get their own kernel instance on GPUs; any other size,
// and host backends (whose loops vectorise over outputs instead), run the instance with Taps = 0, which
// reads the count from the window at run time.

#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// Taps > 0: the compile-time count, which must equal window.size; Taps == 0: window.size.
template <int Taps, class Window>
KOKKOS_FORCEINLINE_FUNCTION constexpr int tap_count(const Window& window) {
  if constexpr (Taps > 0)
    return Taps;
  else
    return window.size;
}

// A kernel functor run with a fixed tap count: Kernel::run<Taps>(team) is its body.
template <int Taps, class Kernel>
struct FixedTaps {
  Kernel kernel;
  template <class Team>
  KOKKOS_FUNCTION void operator()(const Team& team) const {
    kernel.template run<Taps>(team);
  }
};

// Calls launch(FixedTaps<Taps, Kernel>{kernel}) with Taps = window_size when that size has its own instance
// on this backend, else with Taps = 0.
template <class ExecSpace, class Kernel, class Launch>
void with_fixed_taps(int window_size, const Kernel& kernel, const Launch& launch) {
  if constexpr (gpu_code_paths_v<ExecSpace>) {
    if (window_size == 11) return launch(FixedTaps<11, Kernel>{kernel});  // the standard SSIM window
    if (window_size == 7) return launch(FixedTaps<7, Kernel>{kernel});
  }
  launch(FixedTaps<0, Kernel>{kernel});
}

}  // namespace kssim::impl
