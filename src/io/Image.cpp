// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/Image.hpp"

#include "io/Error.hpp"

#include <string>

namespace kssim::io {
namespace {

// Interleaved (H, W, channels) samples to planar (1, C, H, W) float32, alpha (the last channel of 2 or 4)
// dropped; `value` converts one sample.
template <class Sample, class Convert>
Array planar(int width, int height, int channels, const std::vector<Sample>& samples, Convert value) {
  const std::size_t h = std::size_t(height), w = std::size_t(width);
  const int color = (channels == 2 || channels == 4) ? channels - 1 : channels;
  std::vector<float> values(std::size_t(color) * h * w);
  for (int c = 0; c < color; ++c)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x)
        values[(std::size_t(c) * h + y) * w + x] = value(samples[(y * w + x) * std::size_t(channels) + std::size_t(c)]);
  return Array({1, std::size_t(color), h, w}, std::move(values));
}

}  // namespace

void check_image_size(const char* format, std::uint64_t width, std::uint64_t height, std::uint64_t channels) {
  if (width == 0 || height == 0)
    throw Error(std::string(format) + ": the image has an invalid size " + std::to_string(width) + "x" +
                std::to_string(height));
  if (channels < 1 || channels > 4)
    throw Error(std::string(format) + ": unsupported number of channels " + std::to_string(channels) +
                " (1 gray, 2 gray + alpha, 3 RGB or 4 RGBA)");
  if (width > max_image_samples || height > max_image_samples || width * height > max_image_samples / channels)
    throw Error(std::string(format) + ": the image is too large (" + std::to_string(width) + "x" +
                std::to_string(height) + "x" + std::to_string(channels) + " samples; the limit is " +
                std::to_string(max_image_samples) + ")");
}

void check_image(const Image& image) {
  if (image.width <= 0 || image.height <= 0)
    throw Error("image has an invalid size " + std::to_string(image.width) + "x" + std::to_string(image.height));
  if (image.channels < 1 || image.channels > 4)
    throw Error("image has an invalid channel count " + std::to_string(image.channels));
  if (image.max_value < 1 || image.max_value > 65535)
    throw Error("image has an invalid maximum sample value " + std::to_string(image.max_value));
  if (image.samples.size() != image.sample_count()) throw Error("image has the wrong number of samples");
  for (std::uint16_t s : image.samples)
    if (s > image.max_value) throw Error("image has a sample above its maximum value");
}

Array image_to_array(const Image& image) {
  check_image(image);
  const double max = double(image.max_value);
  return planar(image.width, image.height, image.channels, image.samples,
                [max](std::uint16_t s) { return float(double(s) / max); });
}

Array image_to_array(const FloatImage& image) {
  if (image.width <= 0 || image.height <= 0 || image.channels < 1 || image.channels > 4 ||
      image.samples.size() != image.sample_count())
    throw Error("float image has an inconsistent size");
  return planar(image.width, image.height, image.channels, image.samples, [](float s) { return s; });
}

Image eight_bit_image(const ImageInfo& info, const std::vector<unsigned char>& pixels) {
  Image image;
  image.width = info.width;
  image.height = info.height;
  image.channels = info.channels;
  image.max_value = 255;
  image.samples.assign(pixels.begin(), pixels.end());
  return image;
}

}  // namespace kssim::io
