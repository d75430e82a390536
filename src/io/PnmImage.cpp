// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/PnmImage.hpp"

#include "io/Error.hpp"

#include <cstdint>
#include <string>

namespace kssim::io {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("invalid PGM/PPM file: " + what); }

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

class Cursor {
 public:
  explicit Cursor(std::span<const std::byte> b) : b_(b) {}

  std::size_t position() const { return i_; }
  std::size_t remaining() const { return b_.size() - i_; }
  bool at_end() const { return i_ == b_.size(); }
  unsigned char peek() const { return std::to_integer<unsigned char>(b_[i_]); }
  unsigned char next() { return std::to_integer<unsigned char>(b_[i_++]); }

  // Header whitespace, with '#' comments running to the end of the line.
  void skip_header_space() {
    while (!at_end()) {
      if (is_space(peek())) {
        ++i_;
      } else if (peek() == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++i_;
      } else {
        break;
      }
    }
  }

  void skip_raster_space() {
    while (!at_end() && is_space(peek())) ++i_;
  }

  // A decimal number in [0, limit]; `what` names it in errors.
  std::uint32_t number(const char* what, std::uint32_t limit) {
    if (at_end()) fail(std::string("truncated before the ") + what);
    if (!is_digit(peek())) fail(std::string("expected a decimal number for the ") + what);
    std::uint64_t v = 0;
    while (!at_end() && is_digit(peek())) {
      v = v * 10 + (next() - '0');
      if (v > limit) fail(std::string("the ") + what + " is larger than " + std::to_string(limit));
    }
    return std::uint32_t(v);
  }

 private:
  std::span<const std::byte> b_;
  std::size_t i_ = 0;
};

constexpr std::uint32_t max_extent = 1u << 24;
constexpr std::uint64_t max_samples = 1ull << 30;

}  // namespace

bool looks_like_pnm(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && std::to_integer<char>(bytes[0]) == 'P' && std::to_integer<char>(bytes[1]) >= '1' &&
         std::to_integer<char>(bytes[1]) <= '7';
}

Image decode_pnm(std::span<const std::byte> bytes) {
  if (!looks_like_pnm(bytes)) fail("missing the P2, P3, P5 or P6 magic number");
  const char kind = std::to_integer<char>(bytes[1]);
  if (kind == '1' || kind == '4') fail("PBM bitmaps (P1, P4) are not supported; use PGM or PPM");
  if (kind == '7') fail("PAM files (P7) are not supported; use PGM or PPM");
  const bool plain = kind == '2' || kind == '3';
  Image image;
  image.channels = (kind == '2' || kind == '5') ? 1 : 3;

  Cursor in(bytes.subspan(2));
  if (in.at_end() || (!is_space(in.peek()) && in.peek() != '#')) fail("expected whitespace after the magic number");
  in.skip_header_space();
  const std::uint32_t width = in.number("width", max_extent);
  in.skip_header_space();
  const std::uint32_t height = in.number("height", max_extent);
  in.skip_header_space();
  const std::uint32_t maxval = in.number("maximum value", 65535);
  if (width == 0 || height == 0) fail("the width and height must be positive");
  if (maxval == 0) fail("the maximum value must be in [1, 65535]");
  const std::uint64_t count = std::uint64_t(width) * height * std::uint64_t(image.channels);
  if (count > max_samples) fail("the image is too large (more than 2^30 samples)");
  image.width = int(width);
  image.height = int(height);
  image.max_value = int(maxval);

  if (in.at_end()) fail("truncated after the header");
  if (!is_space(in.next())) fail("expected one whitespace character after the maximum value");

  if (plain) {
    // Each sample needs at least one digit plus a separator (but the last).
    if (count * 2 - 1 > in.remaining())
      fail("truncated: expected " + std::to_string(count) + " samples, the file is too short");
    image.samples.resize(count);
    for (std::uint64_t k = 0; k < count; ++k) {
      in.skip_raster_space();
      if (in.at_end())
        fail("truncated: expected " + std::to_string(count) + " samples, got " + std::to_string(k));
      const std::uint32_t v = in.number("sample", 65535);
      if (v > maxval) fail("sample " + std::to_string(v) + " exceeds the maximum value " + std::to_string(maxval));
      if (!in.at_end() && !is_space(in.peek())) fail("unexpected character in the samples");
      image.samples[k] = std::uint16_t(v);
    }
    in.skip_raster_space();
    if (!in.at_end()) fail("unexpected data after the last sample (multi-image files are not supported)");
    return image;
  }

  const std::uint64_t bps = maxval > 255 ? 2 : 1;
  if (in.remaining() / bps < count)
    fail("truncated: expected " + std::to_string(count * bps) + " bytes of samples, got " +
         std::to_string(in.remaining()));
  if (in.remaining() != count * bps)
    fail(std::to_string(in.remaining() - count * bps) +
         " unexpected bytes after the samples (multi-image files are not supported)");
  image.samples.resize(count);
  for (std::uint64_t k = 0; k < count; ++k) {
    std::uint32_t v = in.next();
    if (bps == 2) v = (v << 8) | in.next();
    if (v > maxval) fail("sample " + std::to_string(v) + " exceeds the maximum value " + std::to_string(maxval));
    image.samples[k] = std::uint16_t(v);
  }
  return image;
}

std::vector<std::byte> encode_pnm(const Image& image, bool plain) {
  check_image(image);
  if (image.channels != 1 && image.channels != 3) throw Error("PGM/PPM images must have 1 or 3 channels (no alpha)");
  const char kind = image.channels == 1 ? (plain ? '2' : '5') : (plain ? '3' : '6');
  std::string header = std::string("P") + kind + "\n" + std::to_string(image.width) + " " +
                       std::to_string(image.height) + "\n" + std::to_string(image.max_value) + "\n";
  std::vector<std::byte> out;
  for (char c : header) out.push_back(std::byte(static_cast<unsigned char>(c)));
  if (plain) {
    const std::size_t per_line = std::size_t(image.width) * std::size_t(image.channels);
    for (std::size_t k = 0; k < image.samples.size(); ++k) {
      const std::string v = std::to_string(image.samples[k]) + ((k + 1) % per_line == 0 ? "\n" : " ");
      for (char c : v) out.push_back(std::byte(static_cast<unsigned char>(c)));
    }
  } else {
    const bool wide = image.max_value > 255;
    out.reserve(out.size() + image.samples.size() * (wide ? 2 : 1));
    for (std::uint16_t s : image.samples) {
      if (wide) out.push_back(std::byte(s >> 8));
      out.push_back(std::byte(s & 0xff));
    }
  }
  return out;
}

}  // namespace kssim::io
