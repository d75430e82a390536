// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The path of the running executable, as Linux gives it (/proc/self/exe resolved), or "" where it cannot be
// read. The tool executes itself again (WaitPolicy.cpp) or its MPI half beside it (mpi/DistributedLauncher.cpp).

#include <climits>
#include <string>
#if defined(__linux__)
#include <unistd.h>
#endif

namespace kssim::cli {

inline std::string executable_path() {
#if defined(__linux__)
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0 && n < ssize_t(sizeof self - 1)) return std::string(self, std::size_t(n));
#endif
  return {};
}

}  // namespace kssim::cli
