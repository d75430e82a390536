#include "cli/WaitPolicy.hpp"

#include <Kokkos_Macros.hpp>

#include <climits>
#include <cstdlib>
#if defined(__linux__)
#include <unistd.h>
#endif

namespace kssim::cli {

void prefer_passive_openmp_waits(char** argv) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(__linux__)
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice, or already done
  // The executable's own path (not /proc/self/exe itself, which would rename the process "exe").
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 || n >= ssize_t(sizeof self - 1)) return;
  self[n] = '\0';
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv(self, argv);  // returns only on failure
  unsetenv("OMP_WAIT_POLICY");
#else
  (void)argv;
#endif
}

}  // namespace kssim::cli
