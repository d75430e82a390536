#pragma once
// `kssim compare A B [options]`: validates everything, loads both inputs, runs SSIM (Compute.hpp), writes the
// requested files all-or-nothing and only then prints the result.

#include "cli/CompareOptions.hpp"

#include <string>

namespace kssim::cli {

// Runs the command and returns what goes to stdout. Throws UsageError or io::Error (exit status 2) before
// any output file exists; kssim's std::invalid_argument is passed through (also status 2).
std::string run_compare(const CompareOptions& options);

}  // namespace kssim::cli
