// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of the strict PGM/PPM reader and writer (src/io/PnmImage.*) and of image_to_array.

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/PnmImage.hpp"

#include <gtest/gtest.h>

namespace kssim::io {
namespace {

using test::bytes_of;

Image make_image(int w, int h, int channels, int max_value) {
  return test::patterned_image(w, h, channels, max_value, 7919u, 0u);
}

void expect_same(const Image& a, const Image& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.max_value, b.max_value);
  EXPECT_EQ(a.samples, b.samples);
}

TEST(Pnm, RoundTripsAllKinds) {
  for (int channels : {1, 3})
    for (int max_value : {1, 7, 255, 256, 1000, 65535})
      for (bool plain : {false, true}) {
        const Image im = make_image(5, 3, channels, max_value);
        const auto bytes = encode_pnm(im, plain);
        const char kind = std::to_integer<char>(bytes[1]);
        EXPECT_EQ(kind, channels == 1 ? (plain ? '2' : '5') : (plain ? '3' : '6'));
        expect_same(decode_pnm(bytes), im);
      }
}

TEST(Pnm, BinarySampleWidthFollowsMaxval) {
  EXPECT_EQ(encode_pnm(make_image(4, 2, 1, 255)).size(), std::string("P5\n4 2\n255\n").size() + 8);
  EXPECT_EQ(encode_pnm(make_image(4, 2, 1, 256)).size(), std::string("P5\n4 2\n256\n").size() + 16);
  // 16-bit samples are big-endian.
  const Image im = decode_pnm(bytes_of(std::string("P5 1 1 65535\n\x12\x34", 15)));
  EXPECT_EQ(im.samples[0], 0x1234);
}

TEST(Pnm, AcceptsCommentsAndWhitespace) {
  const Image im = decode_pnm(bytes_of("P2 # comment\n# another\r\n 3\t2 # w h\n9\n0 1 2\n\n3   4 9 \n"));
  EXPECT_EQ(im.width, 3);
  EXPECT_EQ(im.height, 2);
  EXPECT_EQ(im.max_value, 9);
  EXPECT_EQ(im.samples, (std::vector<std::uint16_t>{0, 1, 2, 3, 4, 9}));
}

TEST(Pnm, ImageToArrayScalesByMaxval) {
  const Image im = decode_pnm(bytes_of("P3\n2 1\n10\n0 5 10  1 2 3\n"));
  const Array a = image_to_array(im);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{1, 3, 1, 2}));
  const auto& v = std::get<std::vector<float>>(a.values);
  // Planar (C, H, W): R = {0, 1}, G = {5, 2}, B = {10, 3}, each / 10.
  EXPECT_EQ(v, (std::vector<float>{0.0f, 0.1f, 0.5f, 0.2f, 1.0f, 0.3f}));
}

TEST(Pnm, RejectsEveryTruncationOfBinaryFiles) {
  for (int max_value : {255, 65535}) {
    const auto bytes = encode_pnm(make_image(4, 3, 3, max_value));
    for (std::size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(decode_pnm(std::span(bytes).first(n)), Error) << "prefix of " << n << " bytes";
  }
}

TEST(Pnm, RejectsTruncatedPlainFiles) {
  EXPECT_THROW(decode_pnm(bytes_of("P2\n3 2\n9\n0 1 2 3 4\n")), Error);
  EXPECT_THROW(decode_pnm(bytes_of("P2\n3 2\n9\n")), Error);
  EXPECT_THROW(decode_pnm(bytes_of("P2\n3 2\n9")), Error);
}

TEST(Pnm, RejectsBadHeaders) {
  for (const char* text : {
           "P5",                     // nothing after the magic
           "P5\n",                   // no width
           "P54 4 255\n",            // no whitespace after the magic
           "P5\n-4 4\n255\n",        // negative
           "P5\n0 4\n255\n",         // zero width
           "P5\n4 0\n255\n",         // zero height
           "P5\n4 4\n0\n",           // zero maxval
           "P5\n4 4\n65536\n",       // maxval too large
           "P5\n4 4\n255",           // no whitespace after maxval
           "P5\n4 4 255x",           // bad separator after maxval
           "P5\n99999999 99999999\n255\n",  // too large
           "P5\n4.0 4\n255\n",       // not an integer
           "P8\n1 1\n255\n\0",       // unknown kind
           "PX\n1 1\n255\n\0",       // not a digit
           "Q5\n1 1\n255\n\0",       // not P
       })
    EXPECT_THROW(decode_pnm(bytes_of(text)), Error) << text;
}

TEST(Pnm, RejectsUnsupportedNetpbmKinds) {
  EXPECT_THROW(decode_pnm(bytes_of("P1\n2 2\n0 1\n1 0\n")), Error);
  EXPECT_THROW(decode_pnm(bytes_of(std::string("P4\n8 1\n\xff", 8))), Error);
  EXPECT_THROW(decode_pnm(bytes_of(std::string("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\0", 47))), Error);
}

TEST(Pnm, RejectsBadSamplesAndTrailingData) {
  EXPECT_THROW(decode_pnm(bytes_of("P2\n2 1\n10\n3 11\n")), Error);             // above maxval
  EXPECT_THROW(decode_pnm(bytes_of("P2\n2 1\n10\n3 x\n")), Error);              // not a number
  EXPECT_THROW(decode_pnm(bytes_of("P2\n2 1\n10\n3 4a\n")), Error);             // junk after a number
  EXPECT_THROW(decode_pnm(bytes_of("P2\n2 1\n10\n3 4 5\n")), Error);            // one sample too many
  EXPECT_THROW(decode_pnm(bytes_of("P2\n2 1\n10\n3 # c\n4\n")), Error);         // comment in the raster
  EXPECT_THROW(decode_pnm(bytes_of(std::string("P5\n2 1\n10\n\x03\x0b", 12))), Error);  // above maxval
  EXPECT_THROW(decode_pnm(bytes_of(std::string("P5\n1 1\n255\n\x01\x02", 13))), Error);  // trailing byte
  EXPECT_THROW(decode_pnm(bytes_of(std::string("P5\n1 1\n1000\n\x03\xe9", 14))), Error);  // 1001 > 1000
  EXPECT_THROW(decode_pnm(bytes_of("P5\n1 1\n255\n\x01P5\n1 1\n255\n\x01")), Error);      // two images
}

TEST(Pnm, EncodeRejectsAlpha) {
  EXPECT_THROW(encode_pnm(make_image(2, 2, 2, 255)), Error);
  EXPECT_THROW(encode_pnm(make_image(2, 2, 4, 255)), Error);
}

}  // namespace
}  // namespace kssim::io
