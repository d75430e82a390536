// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A decoded raster image: integer samples with their maximum value (PNG, PGM/PPM, JPEG, WebP, 8/16-bit TIFF)
// or float samples as stored (OpenEXR, PFM, float TIFF), and their conversion to the (1, C, H, W) float32
// array that kssim compares.

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

// Samples as stored, for the floating-point formats: no maximum, no normalisation.
struct FloatImage {
  int width = 0;
  int height = 0;
  int channels = 0;  // as Image
  std::vector<float> samples;  // as Image

  bool has_alpha() const { return channels == 2 || channels == 4; }
  std::size_t sample_count() const { return std::size_t(width) * std::size_t(height) * std::size_t(channels); }
};

// What a file's header announces, known before its pixels are decoded (cheap checks first).
struct ImageInfo {
  int width = 0;
  int height = 0;
  int channels = 0;  // as Image, alpha included
  bool is_float = false;
};

// The most samples (width x height x channels) a reader decodes: 2^30 by default, the tool's limit on its
// inputs. The fuzzers compile src/io with a smaller KSSIM_IO_MAX_SAMPLES so that a tiny file announcing a
// huge image (formats that compress flat content without bound: JPEG, WebP, TIFF, OpenEXR) stays within
// their memory budget.
#ifndef KSSIM_IO_MAX_SAMPLES
#define KSSIM_IO_MAX_SAMPLES (std::uint64_t(1) << 30)
#endif
inline constexpr std::uint64_t max_image_samples = KSSIM_IO_MAX_SAMPLES;

// Throws io::Error ("<format>: ...") unless width and height are positive, channels is 1 to 4, and the
// sample count is at most max_image_samples. The readers call it before allocating the pixels.
void check_image_size(const char* format, std::uint64_t width, std::uint64_t height, std::uint64_t channels);

// An 8-bit image of the size `info` announces from its decoded, interleaved samples (JPEG, WebP).
Image eight_bit_image(const ImageInfo& info, const std::vector<unsigned char>& pixels);

// Throws io::Error unless the image is consistent: positive size, 1 to 4 channels, max_value in [1, 65535],
// the right number of samples, none above max_value.
void check_image(const Image& image);

// The image as a float32 array of shape (1, C, H, W), C = 1 (gray) or 3 (RGB), each sample divided by
// max_value (computed in double, rounded once to float). An alpha channel is dropped, not composited.
Array image_to_array(const Image& image);

// The image as a float32 array of shape (1, C, H, W), samples as stored; alpha dropped likewise.
Array image_to_array(const FloatImage& image);

}  // namespace kssim::io
