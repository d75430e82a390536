#pragma once
// A decoded raster image (PNG, PGM or PPM): integer samples with their maximum value, and its conversion to
// the (1, C, H, W) float32 array that kssim compares.

#include "io/Array.hpp"

#include <cstdint>
#include <vector>

namespace kssim::io {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;      // 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA
  int max_value = 255;   // samples lie in [0, max_value], 1 <= max_value <= 65535
  std::vector<std::uint16_t> samples;  // row-major and interleaved: samples[(y * width + x) * channels + c]

  bool has_alpha() const { return channels == 2 || channels == 4; }
  int color_channels() const { return has_alpha() ? channels - 1 : channels; }
  std::size_t sample_count() const { return std::size_t(width) * std::size_t(height) * std::size_t(channels); }
};

// Throws io::Error unless the image is consistent: positive size, 1 to 4 channels, max_value in [1, 65535],
// the right number of samples, none above max_value.
void check_image(const Image& image);

// The image as a float32 array of shape (1, C, H, W), C = 1 (gray) or 3 (RGB), each sample divided by
// max_value (computed in double, rounded once to float). An alpha channel is dropped, not composited.
Array image_to_array(const Image& image);

}  // namespace kssim::io
