// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The 8-bit rendering of an SSIM map written by `kssim compare --map FILE.png`: a colormap of our own
// (black -> purple -> crimson -> orange -> pale yellow as SSIM goes 0 -> 1) and the tiling of the map's
// 2D slices into one RGB picture, row by row.

#include "io/Array.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kssim::cli {

struct Rgb {
  std::uint8_t r, g, b;
};

// The color of one SSIM value: piecewise linear between the stops below; values <= 0 are black, values
// >= 1 pale yellow, NaN is the gutter gray.
//   0.00 (0, 0, 0) black      0.25 (70, 20, 130) purple    0.50 (200, 40, 80) crimson
//   0.75 (245, 150, 30) orange                             1.00 (255, 255, 215) pale yellow
// Luminance rises monotonically, so the image also reads correctly in grayscale.
Rgb ssim_color(double s);

// The gray of the 2-pixel gutters between tiles (not a color of the map).
inline constexpr Rgb gutter_color{128, 128, 128};
inline constexpr int gutter_pixels = 2;

// Grid of tiles for a map of extents (N, C, H, W): N rows, C columns; (N, C, D, H, W): N*C rows (n-major),
// D columns. Returns {rows, columns}.
std::vector<std::size_t> tile_grid(const std::vector<std::size_t>& map_shape);

// Width and height in pixels of the rendering of a map of extents (N, C, [D,] H, W).
std::vector<std::size_t> rendered_size(const std::vector<std::size_t>& map_shape);

// Row y of the picture of a map of extents (N, C, H, W) or (N, C, D, H, W) (values in C order, any float
// dtype) as 8-bit RGB, `width` pixels (at least rendered_size()[0]; gutter gray right of the tiles): one
// tile per 2D slice laid out as tile_grid() says, tile pixel (x, y) = map (..., y, x).
void render_map_row(const io::Array& map, std::size_t y, std::size_t width, unsigned char* dst);

// A few lines describing colors and layout, for --help and the PNG's Description chunk.
std::string colormap_legend();

}  // namespace kssim::cli
