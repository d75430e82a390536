#pragma once
// `kssim compare A.npy B.npy --decompose DxHxW` under mpirun: each rank reads its block of the arrays and
// kssim::mpi computes the SSIM of the whole field (src/cli/mpi/DistributedCompare.cpp). Builds without MPI
// link DistributedUnavailable.cpp instead, which refuses the option.

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
// (mpirun may kill the job's other processes as soon as one exits with a non-zero status).
int run_distributed_compare(const CompareOptions& o, const std::function<int(const DistributedOutcome&)>& emit);

}  // namespace kssim::cli
