// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of the libpng-based reader and writer (src/io/PngImage.*).

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/PngImage.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace kssim::io {
namespace {

using test::bytes_of;
using test::png_chunk;

Image make_image(int w, int h, int channels, int max_value) {
  return test::patterned_image(w, h, channels, max_value, 40503u, 17u);
}

TEST(Png, RoundTripsEveryColorTypeAtBothDepths) {
  for (int max_value : {255, 65535})
    for (int channels : {1, 2, 3, 4}) {
      const Image im = make_image(13, 7, channels, max_value);
      const Image back = decode_png(encode_png(im, {{"Title", "test"}}));
      EXPECT_EQ(back.width, 13);
      EXPECT_EQ(back.height, 7);
      EXPECT_EQ(back.channels, channels);
      EXPECT_EQ(back.max_value, max_value);
      EXPECT_EQ(back.samples, im.samples) << channels << " channels, max " << max_value;
    }
}

TEST(Png, ImageToArrayDropsAlpha) {
  Image im = make_image(3, 2, 4, 255);
  const Array a = image_to_array(decode_png(encode_png(im)));
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{1, 3, 2, 3}));
  const auto& v = std::get<std::vector<float>>(a.values);
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 6; ++p) EXPECT_EQ(v[c * 6 + p], float(im.samples[p * 4 + c] / 255.0));
  Image gray_alpha = make_image(3, 2, 2, 65535);
  const Array g = image_to_array(decode_png(encode_png(gray_alpha)));
  EXPECT_EQ(g.shape, (std::vector<std::size_t>{1, 1, 2, 3}));
  EXPECT_EQ(std::get<std::vector<float>>(g.values)[5], float(gray_alpha.samples[10] / 65535.0));
}

TEST(Png, RejectsEveryTruncation) {
  const auto bytes = encode_png(make_image(9, 5, 3, 255));
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(decode_png(std::span(bytes).first(n)), Error) << "prefix of " << n << " bytes";
}

TEST(Png, RejectsCorruption) {
  const auto good = encode_png(make_image(9, 5, 3, 255));
  // Flipping any byte after the signature breaks a length, a type, a CRC or the data it covers.
  for (std::size_t i = 8; i < good.size(); ++i) {
    auto bad = good;
    bad[i] ^= std::byte(0x01);
    EXPECT_THROW(decode_png(bad), Error) << "byte " << i;
  }
  auto bad_signature = good;
  bad_signature[0] = std::byte(0x88);
  EXPECT_THROW(decode_png(bad_signature), Error);
}

std::vector<std::byte> ihdr(std::uint32_t w, std::uint32_t h, int depth, int color_type) {
  std::vector<std::byte> d;
  test::put_be32(d, w);
  test::put_be32(d, h);
  for (int v : {depth, color_type, 0, 0, 0}) d.push_back(std::byte(v));
  return d;
}

std::vector<std::byte> signature() { return bytes_of(std::string("\x89PNG\r\n\x1a\n", 8)); }

TEST(Png, RejectsImplausibleSizesWithoutAllocating) {
  // A tiny file announcing 900000 x 900000 RGBA16 (about 6 TB) must fail before allocating.
  auto file = signature();
  for (const auto& c : {png_chunk("IHDR", ihdr(900000, 900000, 16, 6)), png_chunk("IDAT", std::vector<std::byte>(20)),
                        png_chunk("IEND", {})})
    file.insert(file.end(), c.begin(), c.end());
  EXPECT_THROW(decode_png(file), Error);
}

TEST(Png, RejectsInvalidHeaders) {
  for (auto [depth, color_type] : {std::pair{3, 0}, {8, 1}, {16, 3}, {4, 2}, {8, 7}, {32, 6}}) {
    auto file = signature();
    for (const auto& c : {png_chunk("IHDR", ihdr(4, 4, depth, color_type)), png_chunk("IEND", {})})
      file.insert(file.end(), c.begin(), c.end());
    EXPECT_THROW(decode_png(file), Error) << depth << " " << color_type;
  }
  auto zero = signature();
  for (const auto& c : {png_chunk("IHDR", ihdr(0, 4, 8, 0)), png_chunk("IEND", {})}) zero.insert(zero.end(), c.begin(), c.end());
  EXPECT_THROW(decode_png(zero), Error);
  auto no_idat = signature();
  for (const auto& c : {png_chunk("IHDR", ihdr(4, 4, 8, 0)), png_chunk("IEND", {})})
    no_idat.insert(no_idat.end(), c.begin(), c.end());
  EXPECT_THROW(decode_png(no_idat), Error);
}

TEST(Png, EncodeRejectsUnsupportedImages) {
  EXPECT_THROW(encode_png(make_image(2, 2, 3, 1000)), Error);
  Image bad = make_image(2, 2, 3, 255);
  bad.samples.pop_back();
  EXPECT_THROW(encode_png(bad), Error);
  EXPECT_THROW(encode_png(make_image(2, 2, 3, 255), {{"", "empty keyword"}}), Error);
}

// Pictures written row by row (the map PNG's fast path) decode to the rows written, for both depths, every
// channel count, a single row, and pictures large enough to be compressed in several pieces.
TEST(Png, RowsRoundTripAtBothDepths) {
  struct Case {
    int width, height, channels, depth;
  };
  for (const Case& c : {Case{13, 7, 3, 8}, Case{5, 1, 1, 16}, Case{1, 9, 4, 8}, Case{800, 700, 3, 8}, Case{300, 900, 2, 16}}) {
    SCOPED_TRACE(std::to_string(c.width) + " x " + std::to_string(c.height) + ", " + std::to_string(c.channels) +
                 " channels, " + std::to_string(c.depth) + " bits");
    const Image want = make_image(c.width, c.height, c.channels, c.depth == 16 ? 65535 : 255);
    PngRows rows;
    rows.width = c.width;
    rows.height = c.height;
    rows.channels = c.channels;
    rows.bit_depth = c.depth;
    const std::size_t per_row = std::size_t(c.width) * std::size_t(c.channels);
    rows.write_row = [&](std::size_t y, unsigned char* dst) {
      for (std::size_t k = 0; k < per_row; ++k) {
        const std::uint16_t v = want.samples[y * per_row + k];
        if (c.depth == 16) {
          dst[2 * k] = static_cast<unsigned char>(v >> 8);
          dst[2 * k + 1] = static_cast<unsigned char>(v & 0xff);
        } else {
          dst[k] = static_cast<unsigned char>(v);
        }
      }
    };
    const auto png = encode_png_rows(rows, {{"Title", "rows"}});
    const Image back = decode_png(png);  // libpng checks every CRC and the zlib stream's Adler-32
    EXPECT_EQ(back.width, c.width);
    EXPECT_EQ(back.height, c.height);
    EXPECT_EQ(back.channels, c.channels);
    EXPECT_EQ(back.max_value, want.max_value);
    EXPECT_EQ(back.samples, want.samples);
    const std::string text(reinterpret_cast<const char*>(png.data()), png.size());
    EXPECT_NE(text.find(std::string("tEXtTitle\0rows", 14)), std::string::npos);
  }
}

TEST(Png, RowsRejectInvalidLayouts) {
  PngRows rows;
  rows.write_row = [](std::size_t, unsigned char*) {};
  for (auto [w, h, c, d] : {std::tuple{0, 4, 3, 8}, {4, 0, 3, 8}, {4, 4, 5, 8}, {4, 4, 3, 12}}) {
    rows.width = w;
    rows.height = h;
    rows.channels = c;
    rows.bit_depth = d;
    EXPECT_THROW(encode_png_rows(rows), Error) << w << " " << h << " " << c << " " << d;
  }
}

}  // namespace
}  // namespace kssim::io
