// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What `kssim compare` prints for one pair: a plain text block (the mean, then per-image, per-channel and
// timing lines) or one JSON object on one line.

#include "cli/CompareOptions.hpp"
#include "cli/Compute.hpp"
#include "cli/Inputs.hpp"

#include <kssim/Options.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace kssim::cli {

struct PairReport {
  const Input& a;
  const Input& b;
  const Input* mask;  // --mask, or null
  const ComputeResult& result;
  const std::vector<int>& extents;            // kssim's (N, C, ...) of the pair
  const std::vector<std::size_t>& map_shape;  // in A's layout
  bool below_threshold;
  bool several;  // one of several pairs: the plain mean line names B
};

// "<mean>\n" ("<mean>  <path of B>\n" with several pairs), then "image <n>: ", "[image <n> ]channel <c>: " and
// "timing: ..." lines as requested.
std::string plain_report(const PairReport& report);

// One JSON object and a newline.
std::string json_report(const PairReport& report, const CompareOptions& o, const Options& opts);

}  // namespace kssim::cli
