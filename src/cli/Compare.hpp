// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// `kssim compare A B [B2 ...] [options]`: validates everything, probes every input's header, then for each
// B decodes it, runs SSIM against A (Compute.hpp), and only when every pair succeeded writes the requested
// files all-or-nothing and returns what goes to stdout.

#include "cli/CompareOptions.hpp"

#include <string>
#include <vector>

namespace kssim::cli {

struct CompareOutcome {
  std::string out;                    // stdout
  std::vector<std::string> warnings;  // one line each, without the "kssim: warning: " prefix
  int status = 0;                     // 0, or 1 when an SSIM is below --threshold
};

// Runs the command. Throws UsageError or io::Error (exit status 2) before any output file exists and before
// anything is printed; kssim's std::invalid_argument is passed through (also status 2).
CompareOutcome run_compare(const CompareOptions& options);

}  // namespace kssim::cli
