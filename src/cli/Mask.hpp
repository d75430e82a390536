// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The --mask input of `kssim compare`: a PNG (or any image format) or a .npy array of weights in [0, 1],
// read like A and B (channel axis, --dims), of A's spatial extents, with one channel (applied to every
// channel) or A's channel count, and one image (applied to every image) or A's image count.

#include "cli/Inputs.hpp"
#include "io/Array.hpp"

#include <string>
#include <vector>

namespace kssim::cli {

// Probes the mask file and checks its shape against the images' kssim extents (N, C, [D,] H, W); throws
// UsageError or io::Error.
Input probe_mask(const std::string& path, int dims, const std::string& channel_axis, const std::vector<int>& extents);

// Decodes the mask probed by probe_mask and returns it as kssim needs it: (N, 1 or C, [D,] H, W) in `dtype`,
// the single image repeated when the inputs have several. Throws UsageError when a value is outside [0, 1]
// or not finite.
io::Array load_mask(Input& mask, int dims, const std::vector<int>& extents, io::DType dtype);

}  // namespace kssim::cli
