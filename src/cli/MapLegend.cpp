// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/MapLegend.hpp"

#include "cli/Colormap.hpp"

#include <string>

namespace kssim::cli {
namespace {

// 3x5 glyphs, one 3-bit row mask per line (bit 2 = left column).
struct Glyph {
  char c;
  unsigned char rows[5];
};
constexpr Glyph glyphs[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}},
};
constexpr int scale = 2;                     // each glyph pixel is 2x2 image pixels
constexpr int advance = (3 + 1) * scale;     // glyph width plus one column of spacing
constexpr Rgb ink{255, 255, 255};

void put(io::Image& im, std::size_t x, std::size_t y, Rgb c) {
  if (x >= std::size_t(im.width) || y >= std::size_t(im.height)) return;
  std::uint16_t* p = im.samples.data() + (y * std::size_t(im.width) + x) * 3;
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

void text(io::Image& im, std::size_t x0, std::size_t y0, const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    for (const Glyph& g : glyphs)
      if (g.c == s[i])
        for (int row = 0; row < 5; ++row)
          for (int col = 0; col < 3; ++col)
            if (g.rows[row] & (4 >> col))
              for (int dy = 0; dy < scale; ++dy)
                for (int dx = 0; dx < scale; ++dx)
                  put(im, x0 + i * advance + std::size_t(col * scale + dx), y0 + std::size_t(row * scale + dy), ink);
}

}  // namespace

void draw_legend(io::Image& image, std::size_t top) {
  const std::size_t width = std::size_t(image.width);
  constexpr std::size_t margin = 12, bar_top = 6, bar_height = 12, tick = 4;
  for (std::size_t y = top; y < top + legend_height; ++y)
    for (std::size_t x = 0; x < width; ++x) put(image, x, y, gutter_color);
  const std::size_t bar_width = width - 2 * margin;
  for (std::size_t x = 0; x < bar_width; ++x) {
    const Rgb c = ssim_color(double(x) / double(bar_width - 1));
    for (std::size_t y = 0; y < bar_height; ++y) put(image, margin + x, top + bar_top + y, c);
  }
  const char* labels[] = {"0", "0.25", "0.5", "0.75", "1"};
  for (int k = 0; k < 5; ++k) {
    const std::size_t x = margin + std::size_t(k) * (bar_width - 1) / 4;
    for (std::size_t y = 0; y < tick; ++y) put(image, x, top + bar_top + bar_height + y, ink);
    const std::string label = labels[k];
    const std::size_t w = label.size() * advance - scale;
    std::size_t x0 = x >= w / 2 ? x - w / 2 : 0;
    if (x0 + w > width) x0 = width - w;
    text(image, x0, top + bar_top + bar_height + tick + 2, label);
  }
}

}  // namespace kssim::cli
