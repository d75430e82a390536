// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/PfmImage.hpp"

#include "io/Error.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kssim::io {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("invalid PFM file: " + what); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The header's text fields: a token of at most 32 printable characters, then exactly one whitespace.
std::string token(std::span<const std::byte> bytes, std::size_t& i, const char* what) {
  std::string t;
  while (i < bytes.size() && !is_space(char(bytes[i]))) {
    const char c = char(bytes[i++]);
    if (c < '!' || c > '~' || t.size() >= 32) fail(std::string("malformed ") + what);
    t += c;
  }
  if (t.empty()) fail(std::string("missing the ") + what);
  if (i >= bytes.size()) fail(std::string("truncated after the ") + what);
  ++i;  // the one separator
  return t;
}

std::uint32_t extent(const std::string& t, const char* what) {
  if (t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos || t == "0" || t[0] == '0')
    fail(std::string("the ") + what + " must be a positive decimal integer, got '" + t + "'");
  return std::uint32_t(std::stoul(t));
}

}  // namespace

bool looks_like_pfm(std::span<const std::byte> bytes) {
  return bytes.size() >= 3 && char(bytes[0]) == 'P' && (char(bytes[1]) == 'F' || char(bytes[1]) == 'f') &&
         is_space(char(bytes[2]));
}

FloatImage decode_pfm(std::span<const std::byte> bytes) {
  if (!looks_like_pfm(bytes)) fail("missing the PF or Pf magic");
  FloatImage image;
  image.channels = char(bytes[1]) == 'F' ? 3 : 1;
  std::size_t i = 3;
  // PFM writers put width and height on one line; accept any single whitespace between the fields.
  const std::uint32_t width = extent(token(bytes, i, "width"), "width");
  const std::uint32_t height = extent(token(bytes, i, "height"), "height");
  const std::string scale_text = token(bytes, i, "scale");
  char* end = nullptr;
  const double scale = std::strtod(scale_text.c_str(), &end);
  if (end != scale_text.c_str() + scale_text.size() || !std::isfinite(scale) || scale == 0)
    fail("the scale must be a finite non-zero number, got '" + scale_text + "'");
  check_image_size("PFM", width, height, std::uint64_t(image.channels));
  const std::size_t count = std::size_t(width) * height * std::size_t(image.channels);
  const std::size_t data = bytes.size() - i;
  if (data / 4 < count)
    fail("truncated: expected " + std::to_string(count * 4) + " bytes of samples, got " + std::to_string(data));
  if (data != count * 4) fail(std::to_string(data - count * 4) + " unexpected bytes after the samples");
  image.width = int(width);
  image.height = int(height);
  image.samples.resize(count);
  const bool little = scale < 0;
  const std::size_t row = std::size_t(width) * std::size_t(image.channels);
  for (std::size_t y = 0; y < height; ++y) {
    const std::byte* src = bytes.data() + i + (std::size_t(height) - 1 - y) * row * 4;  // stored bottom-up
    for (std::size_t k = 0; k < row; ++k) {
      std::uint32_t u = 0;
      for (int b = 0; b < 4; ++b) {
        const std::uint32_t v = std::to_integer<std::uint32_t>(src[k * 4 + std::size_t(b)]);
        u |= little ? v << (8 * b) : v << (8 * (3 - b));
      }
      image.samples[y * row + k] = std::bit_cast<float>(u);
    }
  }
  return image;
}

}  // namespace kssim::io
