// Unit tests of the libpng-based reader and writer (src/io/PngImage.*).

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/PngImage.hpp"

#include <gtest/gtest.h>

namespace kssim::io {
namespace {

using test::bytes_of;
using test::png_chunk;

Image make_image(int w, int h, int channels, int max_value) {
  Image im;
  im.width = w;
  im.height = h;
  im.channels = channels;
  im.max_value = max_value;
  im.samples.resize(im.sample_count());
  for (std::size_t i = 0; i < im.samples.size(); ++i) im.samples[i] = std::uint16_t((i * 40503u + 17) % (max_value + 1u));
  return im;
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

}  // namespace
}  // namespace kssim::io
