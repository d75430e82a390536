// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// `kssim ssimulacra2 REF DIST [DIST ...] [--json]`: SSIMULACRA2 of each distorted image against one
// reference, whose pyramid is computed once. Everything is loaded and checked before anything is printed.
// This file and Ssimulacra2Command.cpp need no Kokkos (the CLI fuzzer links them); the computation is in
// Ssimulacra2Compute.cpp.

#include <cstddef>
#include <functional>
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

// The smallest width and height, as libjxl's tool ("Minimum image size is 8x8 pixels"); images below
// 113 x 113 get fewer than six scales, as in the tool.
inline constexpr int ssimulacra2_min_extent = 8;

// What the Kokkos side computes: for each background, the reference and every distorted image as sRGB
// (3, h, w) float planes (filled on request, so that only one batch is held at a time), the score of each
// distorted image; the lowest score over the backgrounds is kept.
struct Ssimulacra2Request {
  int h = 0, w = 0;
  std::vector<float> backgrounds;
  std::size_t count = 0;                                            // distorted images
  std::function<void(float bg, float* rgb)> reference;              // fills 3 * h * w values
  std::function<void(std::size_t i, float bg, float* rgb)> distorted;
};

struct Ssimulacra2Result {
  std::string backend;
  std::vector<double> scores;
};

// Initialises Kokkos for the duration of the call (warnings off). Defined in Ssimulacra2Compute.cpp.
Ssimulacra2Result compute_ssimulacra2(const Ssimulacra2Request& request);

}  // namespace kssim::cli
