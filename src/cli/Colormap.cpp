// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Colormap.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kssim::cli {
namespace {

struct Stop {
  double at;
  double r, g, b;
};

constexpr Stop stops[] = {
    {0.00, 0, 0, 0},        // black: no structural similarity (or anti-correlated, SSIM < 0)
    {0.25, 70, 20, 130},    // purple
    {0.50, 200, 40, 80},    // crimson
    {0.75, 245, 150, 30},   // orange
    {1.00, 255, 255, 215},  // pale yellow: identical
};

// One channel of the color of s in [0, 1]: piecewise linear between the stops, rounded to nearest (v + 0.5
// truncated). The segment (stops[i].at < s <= stops[i + 1].at) is chosen by selects, not a search loop;
// the arithmetic is the documented one. No clamp is needed: t is in [0, 1], and lo + t (hi - lo), rounded
// (fused or not), lies between the stops' values, themselves in [0, 255].
template <double Stop::*C>
inline int channel(double s) {
  static_assert(sizeof(stops) / sizeof(stops[0]) == 5, "the selects below choose among four segments");
  const bool s1 = s > stops[1].at, s2 = s > stops[2].at, s3 = s > stops[3].at;
  const double lo = s3 ? stops[3].*C : s2 ? stops[2].*C : s1 ? stops[1].*C : stops[0].*C;
  const double hi = s3 ? stops[4].*C : s2 ? stops[3].*C : s1 ? stops[2].*C : stops[1].*C;
  const double at = s3 ? stops[3].at : s2 ? stops[2].at : s1 ? stops[1].at : stops[0].at;
  const double next = s3 ? stops[4].at : s2 ? stops[3].at : s1 ? stops[2].at : stops[1].at;
  const double t = (s - at) / (next - at);
  return int(lo + t * (hi - lo) + 0.5);
}

// The documented color of each value: s <= 0 is the first stop's (t = 0 of the first segment), s > 1 the
// last one's (t = 1 of the last), NaN the gutter gray. Written for the vectoriser (selects, no branches;
// this file is compiled with -fno-trapping-math, without which GCC keeps the branches of selects whose
// comparisons or conversions could raise on NaN): the map picture colours 25 million values for a 4K RGB
// pair.
template <class T>
void color_row(const T* values, std::size_t count, unsigned char* dst) {
  constexpr std::size_t block = 256;
  int rgb[3][block];
  for (std::size_t x0 = 0; x0 < count; x0 += block) {
    const std::size_t n = count - x0 < block ? count - x0 : block;
#pragma omp simd
    for (std::size_t k = 0; k < n; ++k) {
      const double v = double(values[x0 + k]);
      const bool nan = v != v;
      const double s = nan || v < stops[0].at ? stops[0].at : v > stops[4].at ? stops[4].at : v;
      const int r = channel<&Stop::r>(s), g = channel<&Stop::g>(s), b = channel<&Stop::b>(s);
      rgb[0][k] = nan ? gutter_color.r : r;
      rgb[1][k] = nan ? gutter_color.g : g;
      rgb[2][k] = nan ? gutter_color.b : b;
    }
    for (std::size_t k = 0; k < n; ++k)
      for (int c = 0; c < 3; ++c) dst[3 * (x0 + k) + c] = static_cast<unsigned char>(rgb[c][k]);
  }
}

}  // namespace

Rgb ssim_color(double s) {
  unsigned char c[3];
  color_row(&s, 1, c);
  return {c[0], c[1], c[2]};
}


std::vector<std::size_t> tile_grid(const std::vector<std::size_t>& shape) {
  if (shape.size() == 4) return {shape[0], shape[1]};
  if (shape.size() == 5) return {shape[0] * shape[1], shape[2]};
  throw std::invalid_argument("kssim: a map has 4 or 5 axes");
}

std::vector<std::size_t> rendered_size(const std::vector<std::size_t>& shape) {
  const auto grid = tile_grid(shape);
  const std::size_t h = shape[shape.size() - 2], w = shape[shape.size() - 1];
  const std::size_t g = gutter_pixels;
  return {grid[1] * w + (grid[1] - 1) * g, grid[0] * h + (grid[0] - 1) * g};
}

void render_map_row(const io::Array& map, std::size_t y, std::size_t width, unsigned char* dst) {
  const auto grid = tile_grid(map.shape);
  const std::size_t h = map.shape[map.shape.size() - 2], w = map.shape[map.shape.size() - 1];
  static_assert(gutter_color.r == gutter_color.g && gutter_color.g == gutter_color.b, "the fills below are gray");
  const std::size_t ty = y / (h + gutter_pixels), yy = y % (h + gutter_pixels);
  std::size_t x = 0;  // pixels written
  if (ty < grid[0] && yy < h) {
    std::visit(
        [&](const auto& values) {
          // Slices are contiguous in C order; slice k sits in grid row k / columns, column k % columns.
          for (std::size_t tx = 0; tx < grid[1]; ++tx) {
            if (tx > 0) {
              std::memset(dst + 3 * x, gutter_color.r, 3 * gutter_pixels);
              x += gutter_pixels;
            }
            color_row(values.data() + ((ty * grid[1] + tx) * h + yy) * w, w, dst + 3 * x);
            x += w;
          }
        },
        map.values);
  }
  std::memset(dst + 3 * x, gutter_color.r, 3 * (width - x));  // a gutter row, or right of the tiles
}

std::string colormap_legend() {
  return "Colors (linear between stops): SSIM <= 0 black, 0.25 purple, 0.5 crimson, 0.75 orange, "
         "1 pale yellow (identical); brighter means more similar. Each 2D slice of the map is one tile, "
         "tiles separated by 2-pixel gray (128, 128, 128) gutters: for images one row of tiles per image n "
         "and one column per channel c (R, G, B); for volumes one row per (n, c) and one column per depth "
         "slice d. Tile pixel (x, y) is map element (y, x) of its slice.";
}

}  // namespace kssim::cli
