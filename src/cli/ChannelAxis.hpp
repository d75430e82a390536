// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Where the channel axis of a .npy input is: first (before the spatial axes: (C, H, W), (N, C, H, W),
// kssim's own layout) or last (after them: (H, W, C), (N, H, W, C), what NumPy, PIL, imageio and
// scikit-image produce). Images are decoded to (1, C, H, W) and need no choice. Without --channel-axis a
// shape that reads sensibly both ways is refused rather than guessed.

#include "io/Array.hpp"

#include <string>
#include <vector>

namespace kssim::cli {

enum class ChannelAxis { First, Last };

// The layout of an input of `shape` (rank 2 to 5) under --dims `dims` and --channel-axis `option` ("",
// "first" or "last"). Without the option, an array whose channel-first reading has a channel extent above
// 4 while its last extent is 1, 3 or 4 (an (H, W, 3) photograph would otherwise be read as 3 pixels wide)
// throws UsageError naming the option; every other array is channel-first. Arrays without a channel axis
// ((H, W) with --dims 2, (D, H, W) with --dims 3) are channel-first whatever the option.
ChannelAxis channel_axis_of(const std::string& which, const std::vector<std::size_t>& shape, int dims,
                            const std::string& option);

// The shape with its channel axis moved to kssim's position (just before the spatial axes).
std::vector<std::size_t> channels_first_shape(const std::vector<std::size_t>& shape, int dims, ChannelAxis axis);

// Moves the channel axis of `array` (whose shape is `shape`, in `from` layout) from last to first, or back
// with `to_last`: (outer, spatial..., C) <-> (outer, C, spatial...). A no-op for ChannelAxis::First.
io::Array channels_first(io::Array array, int dims, ChannelAxis from);
io::Array channels_last(io::Array array, int dims, ChannelAxis to);

}  // namespace kssim::cli
