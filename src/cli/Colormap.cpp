#include "cli/Colormap.hpp"

#include "io/Error.hpp"
#include "io/Pieces.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
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

// Rounded to nearest (v + 0.5 truncated: v is never negative here), without a libm call: this runs once per
// channel of every pixel of a map picture.
std::uint8_t channel(double v) { return std::uint8_t(std::fmin(255.0, std::fmax(0.0, v)) + 0.5); }

}  // namespace

Rgb ssim_color(double s) {
  if (std::isnan(s)) return gutter_color;
  constexpr int count = int(sizeof(stops) / sizeof(stops[0]));
  if (s <= stops[0].at) return {channel(stops[0].r), channel(stops[0].g), channel(stops[0].b)};
  for (int i = 1; i < count; ++i) {
    if (s <= stops[i].at) {
      const Stop& lo = stops[i - 1];
      const Stop& hi = stops[i];
      const double t = (s - lo.at) / (hi.at - lo.at);
      return {channel(lo.r + t * (hi.r - lo.r)), channel(lo.g + t * (hi.g - lo.g)), channel(lo.b + t * (hi.b - lo.b))};
    }
  }
  const Stop& last = stops[count - 1];
  return {channel(last.r), channel(last.g), channel(last.b)};
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

io::Image render_map(const io::Array& map) {
  const auto grid = tile_grid(map.shape);
  const auto size = rendered_size(map.shape);
  const std::size_t h = map.shape[map.shape.size() - 2], w = map.shape[map.shape.size() - 1];
  if (size[0] > (1u << 20) || size[1] > (1u << 20) || size[0] * size[1] > (1u << 28))
    throw io::Error("the map is too large to render as PNG; write it as .npy");
  io::Image image;
  image.width = int(size[0]);
  image.height = int(size[1]);
  image.channels = 3;
  image.max_value = 255;
  static_assert(gutter_color.r == gutter_color.g && gutter_color.g == gutter_color.b, "the fill below is gray");
  image.samples.assign(image.sample_count(), gutter_color.r);
  std::visit(
      [&](const auto& values) {
        // Slices are contiguous in C order; slice k sits in grid row k / columns, column k % columns. Rows of
        // tiles are independent: they are shared among the cores (a 4K RGB map has 25 million pixels).
        auto paint = [&](std::size_t, std::size_t begin, std::size_t end) {
          for (std::size_t ky = begin; ky < end; ++ky) {
            const std::size_t k = ky / h, y = ky % h;
            const std::size_t x0 = (k % grid[1]) * (w + gutter_pixels), y0 = (k / grid[1]) * (h + gutter_pixels);
            std::uint16_t* p = image.samples.data() + ((y0 + y) * size[0] + x0) * 3;
            for (std::size_t x = 0; x < w; ++x, p += 3) {
              const Rgb c = ssim_color(double(values[(k * h + y) * w + x]));
              p[0] = c.r;
              p[1] = c.g;
              p[2] = c.b;
            }
          }
        };
        io::for_each_piece(grid[0] * grid[1] * h, std::max(1u, std::thread::hardware_concurrency()), paint);
      },
      map.values);
  return image;
}

std::string colormap_legend() {
  return "Colors (linear between stops): SSIM <= 0 black, 0.25 purple, 0.5 crimson, 0.75 orange, "
         "1 pale yellow (identical); brighter means more similar. Each 2D slice of the map is one tile, "
         "tiles separated by 2-pixel gray (128, 128, 128) gutters: for images one row of tiles per image n "
         "and one column per channel c (R, G, B); for volumes one row per (n, c) and one column per depth "
         "slice d. Tile pixel (x, y) is map element (y, x) of its slice.";
}

}  // namespace kssim::cli
