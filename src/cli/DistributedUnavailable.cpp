// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The stand-in for src/cli/mpi/DistributedCompare.cpp in builds without MPI (and in the CLI fuzzer).

#include "cli/Distributed.hpp"

namespace kssim::cli {

int run_distributed_compare(const CompareOptions&, char**, const std::function<int(const DistributedOutcome&)>& emit) {
  return emit({2, {}, "--decompose needs a kssim built with MPI (the CMake option KSSIM_ENABLE_MPI found none)"});
}

}  // namespace kssim::cli
