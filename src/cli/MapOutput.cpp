// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/MapOutput.hpp"

#include "cli/Colormap.hpp"
#include "cli/MapLegend.hpp"
#include "cli/UsageError.hpp"
#include "io/Error.hpp"
#include "io/PngImage.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#ifndef KSSIM_VERSION
#define KSSIM_VERSION "unknown"
#endif

namespace kssim::cli {
namespace {

// Width and height of the PNG: the tiles, widened and extended by the legend strip when wanted.
std::vector<std::size_t> png_size(const std::vector<std::size_t>& map_shape, bool legend) {
  std::vector<std::size_t> size = rendered_size(map_shape);
  if (legend) {
    size[0] = std::max(size[0], legend_min_width);
    size[1] += gutter_pixels + legend_height;
  }
  return size;
}

// The PNG's size limits: 2^20 pixels a side, 2^28 in all.
bool renderable(const std::vector<std::size_t>& size) {
  return size[0] <= (1u << 20) && size[1] <= (1u << 20) && size[0] * size[1] <= (1u << 28);
}

}  // namespace

io::Array mean_over_channels(const io::Array& map) {
  std::vector<std::size_t> shape = map.shape;
  const std::size_t n = shape[0], c = shape[1];
  std::size_t plane = 1;
  for (std::size_t i = 2; i < shape.size(); ++i) plane *= shape[i];
  shape[1] = 1;
  return std::visit(
      [&](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        std::vector<T> out(n * plane);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t p = 0; p < plane; ++p) {
            double sum = 0;  // in double, then rounded once
            for (std::size_t k = 0; k < c; ++k) sum += double(v[(i * c + k) * plane + p]);
            out[i * plane + p] = T(sum / double(c));
          }
        return io::Array(shape, std::move(out));
      },
      map.values);
}

void check_renderable(const std::vector<int>& map_ext, bool mean, bool legend) {
  std::vector<std::size_t> shape(map_ext.begin(), map_ext.end());
  if (mean) shape[1] = 1;
  if (!renderable(png_size(shape, legend)))
    throw UsageError("--map: the map is too large to render as PNG; write it as .npy");
}

std::string map_description(bool mean, const Options& options) {
  std::string d = colormap_legend();
  if (mean) d += " With --map-channels mean each tile is the mean of the channels' maps.";
  if (options.padding == Padding::Valid)
    d += " Valid padding: map pixel (x, y) is the window centred on input pixel (x + " +
         std::to_string((options.window_size - 1) / 2) + ", y + " + std::to_string((options.window_size - 1) / 2) +
         "), i.e. the map starts (window - 1) / 2 pixels in from every edge.";
  else {
    std::string name = to_string(options.padding);  // same, reflect, replicate: a map of the input's size
    name[0] = char(std::toupper(static_cast<unsigned char>(name[0])));
    d += " " + name + " padding: map pixel (x, y) is input pixel (x, y).";
  }
  return d;
}

std::vector<std::byte> encode_map_png(const io::Array& map, const std::string& description, bool legend) {
  const auto tiles = rendered_size(map.shape);
  const auto size = png_size(map.shape, legend);
  if (!renderable(size)) throw io::Error("the map is too large to render as PNG; write it as .npy");
  // The colour bar is small: drawn once, then copied into its rows.
  io::Image bar;
  if (legend) {
    bar.width = int(size[0]);
    bar.height = int(legend_height);
    bar.channels = 3;
    bar.samples.resize(bar.sample_count());
    draw_legend(bar, 0);
  }
  io::PngRows rows;
  rows.width = int(size[0]);
  rows.height = int(size[1]);
  rows.write_row = [&](std::size_t y, unsigned char* dst) {
    if (y < tiles[1]) return render_map_row(map, y, size[0], dst);
    const std::size_t strip_row = y - tiles[1];
    if (strip_row < gutter_pixels) return void(std::memset(dst, gutter_color.r, 3 * size[0]));  // gray: r = g = b
    const std::uint16_t* src = bar.samples.data() + (strip_row - gutter_pixels) * size[0] * 3;
    for (std::size_t k = 0; k < 3 * size[0]; ++k) dst[k] = static_cast<unsigned char>(src[k]);
  };
  return io::encode_png_rows(
      rows, {{"Title", "kssim SSIM map"}, {"Description", description}, {"Software", "kssim " KSSIM_VERSION}});
}

}  // namespace kssim::cli
