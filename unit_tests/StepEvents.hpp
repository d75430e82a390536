#pragma once
// "No allocation and no host synchronisation per step": counts the allocations and fences (Kokkos Tools
// callbacks) while `steps` runs, then proves the counters work with one allocation and one fence of its own.
// Launch verification (Launch.hpp) allocates and fences by design, so it is off while the steps run.

#include <kssim/impl/Launch.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

namespace kssim_test {

struct StepEvents {
  int allocations = 0, fences = 0;              // during the steps
  int probe_allocations = 0, probe_fences = 0;  // during the probe: must be >= 1 each
  std::string seen;                             // labels of what the steps did, for failure messages
};

namespace step_events_detail {
inline StepEvents* current = nullptr;
// Zero-byte records are not memory: Kokkos 4.6's CUDA backend registers an empty team-scratch record on every
// TeamPolicy launch that asks for no level-1 scratch.
inline void count_allocation(Kokkos::Profiling::SpaceHandle, const char* label, const void*, uint64_t size) {
  if (size == 0 || !current) return;
  ++current->allocations;
  current->seen += std::string(" alloc:") + label;
}
inline void count_fence(const char* name, uint32_t, uint64_t* id) {
  *id = 0;
  if (!current) return;
  ++current->fences;
  current->seen += std::string(" fence:") + name;
}
}  // namespace step_events_detail

template <class Mem, class Exec, class Steps>
StepEvents count_step_events(const Exec& exec, const Steps& steps) {
  namespace d = step_events_detail;
  StepEvents events, probe;
#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = false;
#endif
  Kokkos::Tools::Experimental::set_allocate_data_callback(d::count_allocation);
  Kokkos::Tools::Experimental::set_begin_fence_callback(d::count_fence);
  d::current = &events;
  steps();
  d::current = &probe;
  { Kokkos::View<double*, Mem> allocated("kssim_test::probe", 4); }
  exec.fence();
  d::current = nullptr;
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = true;
#endif
  events.probe_allocations = probe.allocations;
  events.probe_fences = probe.fences;
  return events;
}

}  // namespace kssim_test
