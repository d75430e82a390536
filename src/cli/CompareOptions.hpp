// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The parsed command line of `kssim compare`, before validation.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kssim::cli {

struct CompareOptions {
  std::string a;                  // the reference input
  std::vector<std::string> b;     // one or more inputs compared with A, each on its own
  std::string metric = "ssim";    // "ssim" or "ms-ssim"
  std::string mask;               // empty: no mask
  std::string mask_mode;          // "weights" or "normalized"; empty: weights (with --mask)
  std::string padding = "valid";  // "valid", "same", "reflect" or "replicate"
  int window = 11;
  double sigma = 1.5;
  double k1 = 0.01;
  double k2 = 0.03;
  double data_range = 1.0;
  std::size_t max_workspace = 0;  // bytes; 0: the library's default (kssim::Options::max_workspace_bytes)
  int dims = 2;
  std::string channel_axis;       // "", "first" or "last"
  bool json = false;
  bool per_image = false;
  bool per_channel = false;
  std::optional<double> threshold;  // exit status 1 when an SSIM is below it
  std::string map;     // empty: no map
  std::string map_channels = "all";  // "all" (one tile per channel) or "mean"
  bool map_legend = false;
  std::string grad_a;  // empty: no gradient
  std::string grad_b;
  std::string decompose;  // "DxHxW" / "HxW": split over the MPI ranks (src/cli/Distributed.hpp)
  bool repeat_given = false;
  int repeat = 0;
};

}  // namespace kssim::cli
