// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Every kssim kernel is dispatched through launch(): Kokkos::parallel_for, plus, in test builds, a count
// of the work that really ran. Tests define KSSIM_VERIFY_LAUNCHES; then every team of a TeamPolicy kernel
// (every index of a RangePolicy kernel) counts itself, and launch() waits for the kernel and throws
// std::runtime_error when the count differs from what was launched: the failure mode of a functor that
// the device misreads (KernelArrays.hpp), which otherwise leaves its outputs unwritten without a word.

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kssim::impl {

#if defined(KSSIM_VERIFY_LAUNCHES)
// On by default in such builds; a test of "no allocation and no synchronisation per step" turns it off
// around the steps it measures (the check itself allocates a counter and waits).
inline bool& launch_verification() {
  static bool on = true;
  return on;
}

template <class Functor>
struct CountedWork {
  Functor functor;
  unsigned long long* ran;

  template <class Arg>
  KOKKOS_FUNCTION void operator()(const Arg& arg) const {
    functor(arg);
    if constexpr (std::is_integral_v<Arg>) {
      Kokkos::atomic_inc(ran);
    } else {  // a team member: once per team
      Kokkos::single(Kokkos::PerTeam(arg), [&]() { Kokkos::atomic_inc(ran); });
    }
  }
};
#endif

template <class Policy, class Functor>
void launch_and_count(const std::string& name, const Policy& policy, const Functor& functor) {
#if defined(KSSIM_VERIFY_LAUNCHES)
  if (!launch_verification()) return Kokkos::parallel_for(name, policy, functor);
  using Exec = typename Policy::execution_space;
  Kokkos::View<unsigned long long, typename Exec::memory_space> ran("kssim::launch_count");
  Kokkos::parallel_for(name, policy, CountedWork<Functor>{functor, ran.data()});
  unsigned long long count = 0;
  Kokkos::deep_copy(policy.space(), count, ran);
  policy.space().fence("kssim::launch: count the work that ran");
  unsigned long long expected = 0;
  if constexpr (requires { policy.league_size(); })
    expected = (unsigned long long)policy.league_size();
  else
    expected = (unsigned long long)(policy.end() - policy.begin());
  if (count != expected)
    throw std::runtime_error("kssim: kernel " + name + " ran " + std::to_string(count) + " of " +
                             std::to_string(expected) + " launched teams/indices");
#else
  Kokkos::parallel_for(name, policy, functor);
#endif
}

// A kernel the GPU runtime refused to start (too many registers or too much shared memory per block for
// the launch shape) leaves its outputs untouched, and Kokkos' release builds do not report it. The runtime
// records the refusal at launch time, so asking right after costs no synchronisation.
template <class ExecSpace>
void throw_if_launch_refused(const std::string& name) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    const cudaError_t e = cudaPeekAtLastError();
    if (e != cudaSuccess)
      throw std::runtime_error("kssim: kernel " + name + " was not launched: " + cudaGetErrorString(e));
  }
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) {
    const hipError_t e = hipPeekAtLastError();
    if (e != hipSuccess) throw std::runtime_error("kssim: kernel " + name + " was not launched: " + hipGetErrorString(e));
  }
#endif
  (void)name;
}

// HintLightWeight: on GPUs the functor travels as a kernel argument (kssim's are under 1 kB). By default
// Kokkos copies a functor of 512 bytes or more (most of kssim's, with the launch policy) into constant
// memory, and each such launch first waits on the host for the previous one's kernel to finish: a host
// synchronisation per kernel, which a training loop queueing work ahead (the PyTorch binding) must not pay.
template <class Policy, class Functor>
void launch(const std::string& name, const Policy& policy, const Functor& functor) {
  launch_and_count(name, Kokkos::Experimental::require(policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight),
                   functor);
  throw_if_launch_refused<typename Policy::execution_space>(name);
}

}  // namespace kssim::impl
