// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a step is timed, shared by kssim_perf_tests (PerfSSIM.hpp) and the standalone schedule_sweep.cpp (which
// builds without Google Benchmark): back to back, and with the L2 cache flushed before each step.

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim_perf {

template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

// The two ways peers are timed (perf_tests/time_fused_ssim.py, triton's do_bench), as extra counters:
//  - back to back: `count` steps launched one after the other, one fence at the end (no host wait per step);
//  - L2 flushed: before each step a kernel writes a buffer larger than the last-level cache (256 MB on GPUs:
//    the H200 has 60 MB of L2, and the small shapes fit in it), so every step reads its inputs from DRAM.
//    Timed as (flush + step) x count minus flush x count, both back to back.
template <class ExecSpace, class Step>
double back_to_back_seconds(const ExecSpace& exec, const Step& step, int count) {
  exec.fence("kssim_perf: before batch");
  Kokkos::Timer timer;
  for (int i = 0; i < count; ++i) step();
  exec.fence("kssim_perf: after batch");
  return timer.seconds() / count;
}

template <class ExecSpace>
struct CacheFlush {
  std::size_t words = 0;
  Kokkos::View<unsigned*, typename ExecSpace::memory_space> buffer;
  explicit CacheFlush(const ExecSpace& exec)
      : words((!is_host_space_v<ExecSpace> ? std::size_t(256) : std::size_t(64)) << 18),  // MB -> 4-byte words
        buffer(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kssim_perf::flush"), words) {}
  void operator()(const ExecSpace& exec) const {
    unsigned* p = buffer.data();  // a pointer, never a View, in the kernel (KernelArrays.hpp)
    Kokkos::parallel_for("kssim_perf::flush_cache", Kokkos::RangePolicy<ExecSpace>(exec, 0, words),
                         KOKKOS_LAMBDA(std::size_t i) { p[i] = unsigned(i); });
  }
};

// Seconds per step with the cache flushed before each: (flush + step) x count minus flush x count.
template <class ExecSpace, class Step>
double flushed_seconds(const ExecSpace& exec, const Step& step, int count) {
  const CacheFlush<ExecSpace> flush(exec);
  const double both = back_to_back_seconds(exec, [&] { flush(exec); step(); }, count);
  const double flush_only = back_to_back_seconds(exec, [&] { flush(exec); }, count);
  return both - flush_only;
}

}  // namespace kssim_perf
