// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The colour bar that `--map-legend` draws under a PNG map: the colormap from SSIM 0 to 1, with ticks and
// labels at 0, 0.25, 0.5, 0.75 and 1 in a small built-in pixel font (digits and '.'), on the gutter gray.

#include "io/Image.hpp"

#include <cstddef>

namespace kssim::cli {

// Height in pixels of the legend strip, and the least image width it needs.
inline constexpr std::size_t legend_height = 36;
inline constexpr std::size_t legend_min_width = 200;

// Draws the legend into rows [top, top + legend_height) of an 8-bit RGB image at least legend_min_width wide.
void draw_legend(io::Image& image, std::size_t top);

}  // namespace kssim::cli
