#pragma once
// `kssim compare A.npy B.npy --decompose DxHxW` under mpirun: each rank reads its block of the arrays and
// kssim::mpi computes the SSIM of the whole field (src/cli/mpi/DistributedCompare.cpp). Builds without MPI
// link DistributedUnavailable.cpp instead, which refuses the option.

#include "cli/CompareOptions.hpp"

#include <string>

namespace kssim::cli {

struct DistributedOutcome {
  int status = 0;      // the exit status, the same on every rank
  std::string out;     // what to print on stdout (rank 0 only)
  std::string error;   // the error line to print (rank 0 only, on every rank's behalf)
};

// Initialises and finalises MPI and Kokkos around the whole run.
DistributedOutcome run_distributed_compare(const CompareOptions& o);

}  // namespace kssim::cli
