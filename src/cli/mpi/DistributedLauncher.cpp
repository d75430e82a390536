// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --decompose in the kssim executable of a build with MPI: the same process becomes kssim-mpi, the
// executable beside it that links MPI (cli/Distributed.hpp says why they are two). The exec keeps the
// process, its environment and so its place in mpirun's job: MPI_Init then runs in kssim-mpi.

#include "cli/Distributed.hpp"
#include "cli/ExecutablePath.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace kssim::cli {

namespace {

// This process's rank as the MPI launcher's environment gives it (Open MPI / PMIx, MPICH / PMI), or 0 when
// started without one: the rank that reports an error for all.
bool reports_errors() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* rank = std::getenv(name)) return std::strcmp(rank, "0") == 0;
  return true;
}

}  // namespace

int run_distributed_compare(const CompareOptions&, char** argv,
                            const std::function<int(const DistributedOutcome&)>& emit) {
  const std::string self = executable_path();
  std::string tool = self.substr(0, self.rfind('/') + 1) + "kssim-mpi";  // "kssim-mpi" when unknown
  argv[0] = tool.data();
  execv(tool.c_str(), argv);  // returns only on failure
  const std::string why = std::strerror(errno);
  return emit({2, {}, reports_errors() ? "--decompose: cannot start " + tool + " (" + why + "): it is installed beside kssim "
                                         "in builds with MPI (-DKSSIM_ENABLE_MPI)"
                                       : std::string()});
}

}  // namespace kssim::cli
