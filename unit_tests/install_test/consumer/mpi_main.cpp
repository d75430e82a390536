// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Consumer of an installed kssim's MPI component: the header compiles against kssim::mpi's include paths
// and flags alone, and the program links and starts MPI (run as a singleton, without mpirun).
#include <kssim/mpi/Distributed.hpp>

#include <Kokkos_Core.hpp>
#include <cstdio>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::printf("kssim MPI consumer: %d rank(s)\n", ranks);
  MPI_Finalize();
  return ranks >= 1 ? 0 : 1;
}
