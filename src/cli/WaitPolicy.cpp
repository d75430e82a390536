// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/WaitPolicy.hpp"

#include "cli/ExecutablePath.hpp"

#include <Kokkos_Macros.hpp>

#include <cstdlib>
#include <string>
#if defined(__linux__)
#include <unistd.h>
#endif

namespace kssim::cli {

void prefer_passive_openmp_waits(char** argv) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(__linux__)
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice, or already done
  // The executable's own path (not /proc/self/exe itself, which would rename the process "exe").
  const std::string self = executable_path();
  if (self.empty()) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv(self.c_str(), argv);  // returns only on failure
  unsetenv("OMP_WAIT_POLICY");
#else
  (void)argv;
#endif
}

}  // namespace kssim::cli
