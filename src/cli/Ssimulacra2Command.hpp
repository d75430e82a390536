#pragma once
// `kssim ssimulacra2 REF DIST [DIST ...] [--json]`: SSIMULACRA2 of each distorted image against one
// reference, whose pyramid is computed once. Everything is loaded and checked before anything is printed.

#include <string>
#include <vector>

namespace kssim::cli {

struct Ssimulacra2CliOptions {
  std::string reference;
  std::vector<std::string> distorted;
  bool json = false;
};

// The text to print (one line per distorted image); throws UsageError, io::Error or std::invalid_argument.
std::string run_ssimulacra2(const Ssimulacra2CliOptions& options);

}  // namespace kssim::cli
