// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Division of a team's league rank by a count fixed at launch (tiles per slice, tiles per row), by a
// multiply and a shift (the round-up method of Granlund and Montgomery) with the constants made on the
// host. A runtime integer division is ~20 instructions on GPUs (a float reciprocal, its correction steps and
// fix-ups): the fused kernels' prologues made 4 of them per thread, ~7 instructions per output pixel of the
// fused forward and ~15 of the fused backward, whose threads own only 4 pixels each (sm_90 SASS, ncu,
// perf_tests/README.md, "Where the time goes"). A POD: kernels hold it by value.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>

namespace kssim::impl {

struct IndexDivisor {
  std::uint32_t divisor = 1, multiplier = 1, shift = 0;

  // n / divisor for every n in [0, 2^32) (exact; unit_tests/Test_Schedules.cpp checks it against division).
  KOKKOS_INLINE_FUNCTION std::uint32_t quotient(std::uint32_t n) const {
    const std::uint64_t high = (std::uint64_t(multiplier) * n) >> 32;
    return std::uint32_t((high + n) >> shift);
  }
  KOKKOS_INLINE_FUNCTION int quotient(int n) const { return int(quotient(std::uint32_t(n))); }
};

// For a divisor d >= 1: shift = ceil(log2 d), multiplier = floor(2^32 (2^shift - d) / d) + 1.
inline IndexDivisor make_index_divisor(int d) {
  if (d < 1) throw std::invalid_argument("kssim: internal error: index divisor below 1");
  IndexDivisor r;
  r.divisor = std::uint32_t(d);
  while ((std::uint64_t(1) << r.shift) < r.divisor) ++r.shift;
  r.multiplier = std::uint32_t(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << r.shift) - r.divisor)) / r.divisor + 1);
  return r;
}

}  // namespace kssim::impl
