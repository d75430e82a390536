// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What `--map` writes besides the raw values: the mean over channels (--map-channels mean) and the PNG
// rendering (Colormap.hpp), with its optional colour bar (--map-legend) and its Description text.

#include "io/Array.hpp"

#include <kssim/Options.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace kssim::cli {

// The mean over the channel axis (axis 1) of a map of extents (N, C, ...): extents (N, 1, ...), same dtype.
io::Array mean_over_channels(const io::Array& map);

// Throws UsageError when the PNG rendering of a map of kssim extents `map_ext` would be too large.
void check_renderable(const std::vector<int>& map_ext, bool mean, bool legend);

// The legend text of the PNG's Description chunk: colors, layout, and where a valid map sits in the input.
std::string map_description(bool mean, const Options& options);

// The PNG file of a map of extents (N, C, [D,] H, W): tiles, then the colour bar when `legend`. Rendered
// row by row straight into the compressor (io::encode_png_rows): a 4K RGB map is 74 MB of pixels, never
// held as a whole.
std::vector<std::byte> encode_map_png(const io::Array& map, const std::string& description, bool legend);

}  // namespace kssim::cli
