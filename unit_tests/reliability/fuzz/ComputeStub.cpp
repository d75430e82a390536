// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CLI fuzzer links this instead of src/cli/Compute.cpp, Ssimulacra2Compute.cpp and WaitPolicy.cpp
// (which need Kokkos). The wait policy does nothing here: re-executing the fuzzer would restart it.
// backend_name() is used by the help text; the rest is never reached, because the fuzzer's sandbox holds
// no input file to load: reaching it means the sandbox leaked.
#include "cli/Compute.hpp"
#include "cli/Ssimulacra2Command.hpp"
#include "cli/WaitPolicy.hpp"

#include <cstdio>
#include <cstdlib>

namespace kssim::cli {

[[noreturn]] static void unreachable(const char* what) {
  std::fprintf(stderr, "kssim fuzz: %s reached: an input file was loaded inside the CLI fuzzer's sandbox\n", what);
  std::abort();
}

struct ComputeSession::State {};

const char* backend_name() { return "none (fuzz build)"; }
std::vector<int> map_extents(const std::vector<int>&, const Options&) { unreachable("map_extents()"); }
ComputeSession::ComputeSession(const Options&) { unreachable("ComputeSession()"); }
ComputeSession::~ComputeSession() = default;
ComputeResult ComputeSession::compute(const ComputeRequest&) { unreachable("ComputeSession::compute()"); }
Ssimulacra2Result compute_ssimulacra2(const Ssimulacra2Request&) { unreachable("compute_ssimulacra2()"); }
void prefer_passive_openmp_waits(char**) {}

}  // namespace kssim::cli
