#pragma once
// Checks shared by the tests of the training objects (kssim::MSSSIM, kssim::MaskedSSIM):
//  - "no allocation and no host synchronisation per step": count_step_events counts the allocations and
//    fences (Kokkos Tools callbacks) while `steps` runs, then proves the counters work with one allocation
//    and one fence of its own (launch verification, Launch.hpp, allocates and fences by design, so it is off
//    while the steps run);
//  - accumulation into an existing gradient with a host and a device upstream factor.

#include "TestingUtilities.hpp"

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

template <class Mem, class Exec, class Steps>
void expect_steps_allocate_nothing_and_never_synchronise(const Exec& exec, const Steps& steps) {
  const StepEvents e = count_step_events<Mem>(exec, steps);
  EXPECT_EQ(e.allocations, 0) << e.seen;
  EXPECT_EQ(e.fences, 0) << e.seen;
  EXPECT_GE(e.probe_allocations, 1);
  EXPECT_GE(e.probe_fences, 1);
}

// After loss.forward(): an existing gradient (random, from `seed`) plus -0.2 d/dx1 from a host factor and
// 0.5 d/dx1 from a device factor must be start + 0.3 * want1 (want1: d value / d x1).
template <class C, class Loss>
void expect_accumulates_with_host_and_device_factors(Loss& loss, const Shape& s, const std::vector<double>& want1,
                                                     unsigned seed) {
  using T = typename C::value_type;
  const auto start = random_image(s, seed);
  auto g = to_view<C>("g", s, start);
  loss.backward(g, {}, kssim::Accumulate::Yes, -0.2);
  loss.backward(device_scalar<C>(0.5), g, {}, kssim::Accumulate::Yes);
  std::vector<double> want(s.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = double(T(start[i])) + 0.3 * want1[i];
  EXPECT_LE(relative_l2_error(from_view(g, s), want), 10 * gradient_tolerance<T>());
}

}  // namespace kssim_test
