// --decompose in the kssim executable of a build with MPI: the same process becomes kssim-mpi, the
// executable beside it that links MPI (cli/Distributed.hpp says why they are two). The exec keeps the
// process, its environment and so its place in mpirun's job: MPI_Init then runs in kssim-mpi.

#include "cli/Distributed.hpp"

#include <cerrno>
#include <climits>
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
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string tool = "kssim-mpi";
  if (n > 0 && n < ssize_t(sizeof self - 1)) {
    self[n] = '\0';
    const std::string path(self);
    tool = path.substr(0, path.rfind('/') + 1) + tool;
  }
  argv[0] = tool.data();
  execv(tool.c_str(), argv);  // returns only on failure
  const std::string why = std::strerror(errno);
  return emit({2, {}, reports_errors() ? "--decompose: cannot start " + tool + " (" + why + "): it is installed beside kssim "
                                         "in builds with MPI (-DKSSIM_ENABLE_MPI)"
                                       : std::string()});
}

}  // namespace kssim::cli
