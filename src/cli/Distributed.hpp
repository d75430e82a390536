// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// `kssim compare A.npy B.npy --decompose DxHxW` under mpirun: each rank reads its block of the arrays and
// kssim::mpi computes the SSIM of the whole field (src/cli/mpi/DistributedCompare.cpp), in the executable
// kssim-mpi. The kssim executable itself does not link MPI: loading Open MPI's libraries (UCX among them)
// costs about half a second at every start, and kssim starts twice (cli/WaitPolicy.hpp). With MPI, kssim
// hands --decompose over to the kssim-mpi beside it (cli/mpi/DistributedLauncher.cpp: the same arguments,
// the same process, before MPI_Init); builds without MPI link DistributedUnavailable.cpp, which refuses it.

#include "cli/CompareOptions.hpp"

#include <functional>
#include <string>

namespace kssim::cli {

struct DistributedOutcome {
  int status = 0;      // the exit status, the same on every rank
  std::string out;     // what to print on stdout (rank 0 only)
  std::string error;   // the error line to print (rank 0 only, on every rank's behalf)
};

// Initialises and finalises MPI and Kokkos around the whole run. `emit` prints an outcome and returns the
// exit status (3 when stdout fails); every rank calls it, and no rank exits before rank 0 has printed
// (mpirun may kill the job's other processes as soon as one exits with a non-zero status). `argv`: the
// program's arguments, which the launcher hands to kssim-mpi.
int run_distributed_compare(const CompareOptions& o, char** argv,
                            const std::function<int(const DistributedOutcome&)>& emit);

}  // namespace kssim::cli
