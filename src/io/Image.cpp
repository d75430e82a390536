#include "io/Image.hpp"

#include "io/Error.hpp"

#include <string>

namespace kssim::io {

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
  const std::size_t h = std::size_t(image.height), w = std::size_t(image.width);
  const int channels = image.color_channels();
  std::vector<float> values(std::size_t(channels) * h * w);
  const double max = double(image.max_value);
  for (int c = 0; c < channels; ++c)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) {
        const std::uint16_t s = image.samples[(y * w + x) * std::size_t(image.channels) + std::size_t(c)];
        values[(std::size_t(c) * h + y) * w + x] = float(double(s) / max);
      }
  return Array({1, std::size_t(channels), h, w}, std::move(values));
}

}  // namespace kssim::io
