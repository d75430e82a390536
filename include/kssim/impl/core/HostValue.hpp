// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A device scalar read on the host: the one synchronisation of the calls that return a value.

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace>
double host_value(const ExecSpace& exec, const Kokkos::View<const double, typename ExecSpace::memory_space>& value,
                  const char* fence_label) {
  double host = 0;
  Kokkos::deep_copy(exec, host, value);
  exec.fence(fence_label);
  return host;
}

}  // namespace kssim::impl
