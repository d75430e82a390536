// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of the JPEG, TIFF, WebP, OpenEXR and PFM readers (src/io/*Image.*), of probe_array and of the
// parallel zlib writer. Test files are written here with the same Debian libraries' encoders (libtiff for
// tiled, planar and min-is-white TIFFs that Pillow cannot write; libjpeg, libwebp, OpenEXR), or by hand.

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/ExrImage.hpp"
#include "io/JpegImage.hpp"
#include "io/Load.hpp"
#include "io/ParallelDeflate.hpp"
#include "io/PfmImage.hpp"
#include "io/PngImage.hpp"
#include "io/TiffImage.hpp"
#include "io/WebpImage.hpp"

#include <gtest/gtest.h>

#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfOutputFile.h>
#include <cstdio>
#include <jpeglib.h>
#include <tiffio.h>
#include <webp/encode.h>
#include <zlib.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

namespace kssim::io {
namespace {

namespace fs = std::filesystem;
using test::bytes_of;

std::vector<std::byte> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("kssim_formats_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" + name);
}

template <class T>
std::vector<T> pattern(std::size_t n, unsigned seed, T top) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = T(g() % (std::uint32_t(top) + 1u));
  return v;
}

// ---- TIFF, written with libtiff ----

struct TiffSpec {
  std::uint32_t width = 13, height = 9;
  std::uint16_t samples = 3, bits = 8, format = SAMPLEFORMAT_UINT, photometric = PHOTOMETRIC_RGB;
  std::uint16_t planar = PLANARCONFIG_CONTIG, compression = COMPRESSION_NONE;
  std::uint32_t tile = 0;       // 0: strips of 4 rows; else square tiles of this size (a multiple of 16)
  bool alpha = false;           // the last sample is an (unassociated) alpha
};

// Writes `data` (interleaved, bytes of the sample type) as a TIFF file and returns its bytes.
std::vector<std::byte> write_tiff(const TiffSpec& s, const std::vector<unsigned char>& data, const std::string& name) {
  const fs::path p = temp_path(name);
  TIFF* t = TIFFOpen(p.string().c_str(), "w");
  EXPECT_NE(t, nullptr);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, s.width);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, s.height);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, s.samples);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, s.bits);
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, s.format);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, s.photometric);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, s.planar);
  TIFFSetField(t, TIFFTAG_COMPRESSION, s.compression);
  if (s.alpha) {
    const std::uint16_t extra[] = {EXTRASAMPLE_UNASSALPHA};
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, extra);
  }
  const std::size_t bps = s.bits / 8, spp = s.samples;
  auto sample = [&](std::size_t x, std::size_t y, std::size_t c) {
    return data.data() + ((y * s.width + x) * spp + c) * bps;
  };
  const std::size_t planes = s.planar == PLANARCONFIG_CONTIG ? 1 : spp, per = s.planar == PLANARCONFIG_CONTIG ? spp : 1;
  if (s.tile) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, s.tile);
    TIFFSetField(t, TIFFTAG_TILELENGTH, s.tile);
    std::vector<unsigned char> buf(std::size_t(s.tile) * s.tile * per * bps);
    for (std::size_t plane = 0; plane < planes; ++plane)
      for (std::uint32_t y0 = 0; y0 < s.height; y0 += s.tile)
        for (std::uint32_t x0 = 0; x0 < s.width; x0 += s.tile) {
          std::fill(buf.begin(), buf.end(), 0);
          for (std::size_t y = 0; y < s.tile && y0 + y < s.height; ++y)
            for (std::size_t x = 0; x < s.tile && x0 + x < s.width; ++x)
              for (std::size_t c = 0; c < per; ++c)
                std::memcpy(buf.data() + ((y * s.tile + x) * per + c) * bps, sample(x0 + x, y0 + y, planes == 1 ? c : plane), bps);
          EXPECT_GE(TIFFWriteTile(t, buf.data(), x0, y0, 0, std::uint16_t(plane)), 0);
        }
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 4u);
    std::vector<unsigned char> row(std::size_t(s.width) * per * bps);
    for (std::size_t plane = 0; plane < planes; ++plane)
      for (std::uint32_t y = 0; y < s.height; ++y) {
        for (std::size_t x = 0; x < s.width; ++x)
          for (std::size_t c = 0; c < per; ++c)
            std::memcpy(row.data() + (x * per + c) * bps, sample(x, y, planes == 1 ? c : plane), bps);
        EXPECT_EQ(TIFFWriteScanline(t, row.data(), y, std::uint16_t(plane)), 1);
      }
  }
  TIFFClose(t);
  auto b = file_bytes(p);
  fs::remove(p);
  return b;
}

template <class T>
std::vector<unsigned char> raw(const std::vector<T>& v) {
  std::vector<unsigned char> r(v.size() * sizeof(T));
  std::memcpy(r.data(), v.data(), r.size());
  return r;
}

TEST(Tiff, ReadsStripsTilesPlanesAndDepthsExactly) {
  struct Case {
    const char* name;
    TiffSpec spec;
  };
  std::vector<Case> cases;
  cases.push_back({"rgb8_strips", TiffSpec{}});
  TiffSpec tiled16;
  tiled16.bits = 16;
  tiled16.tile = 16;
  tiled16.width = 37;
  tiled16.height = 21;
  tiled16.compression = COMPRESSION_ADOBE_DEFLATE;
  cases.push_back({"rgb16_tiled_deflate", tiled16});
  TiffSpec planar;
  planar.planar = PLANARCONFIG_SEPARATE;
  planar.compression = COMPRESSION_LZW;
  cases.push_back({"rgb8_planar_lzw", planar});
  TiffSpec rgba;
  rgba.samples = 4;
  rgba.alpha = true;
  rgba.compression = COMPRESSION_PACKBITS;
  cases.push_back({"rgba8_packbits", rgba});
  TiffSpec gray_alpha_tiled;
  gray_alpha_tiled.samples = 2;
  gray_alpha_tiled.alpha = true;
  gray_alpha_tiled.photometric = PHOTOMETRIC_MINISBLACK;
  gray_alpha_tiled.tile = 16;
  gray_alpha_tiled.planar = PLANARCONFIG_SEPARATE;
  cases.push_back({"gray_alpha_tiled_planar", gray_alpha_tiled});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::size_t n = std::size_t(c.spec.width) * c.spec.height * c.spec.samples;
    const std::uint16_t top = c.spec.bits == 16 ? 65535 : 255;
    const std::vector<std::uint16_t> samples = pattern<std::uint16_t>(n, 7, top);
    std::vector<unsigned char> data;
    if (c.spec.bits == 16) data = raw(samples);
    else for (auto v : samples) data.push_back(static_cast<unsigned char>(v));
    const auto bytes = write_tiff(c.spec, data, std::string(c.name) + ".tif");
    const auto decoded = decode_tiff(bytes);
    ASSERT_TRUE(std::holds_alternative<Image>(decoded));
    const Image& im = std::get<Image>(decoded);
    EXPECT_EQ(im.width, int(c.spec.width));
    EXPECT_EQ(im.height, int(c.spec.height));
    EXPECT_EQ(im.channels, int(c.spec.samples));
    EXPECT_EQ(im.max_value, int(top));
    EXPECT_EQ(im.samples, samples);
    const ImageInfo info = tiff_info(bytes);
    EXPECT_EQ(info.width, im.width);
    EXPECT_EQ(info.channels, im.channels);
    EXPECT_FALSE(info.is_float);
    const ArrayInfo probe = probe_array(bytes);
    const LoadedArray loaded = load_array(bytes);
    EXPECT_EQ(probe.shape, loaded.array.shape);
    EXPECT_EQ(loaded.alpha, c.spec.alpha);
    EXPECT_TRUE(loaded.normalized);
  }
}

TEST(Tiff, FloatSamplesKeepTheirValuesAndMinIsWhiteIsInverted) {
  TiffSpec f;
  f.samples = 1;
  f.bits = 32;
  f.format = SAMPLEFORMAT_IEEEFP;
  f.photometric = PHOTOMETRIC_MINISBLACK;
  f.tile = 16;
  f.width = 20;
  std::vector<float> values(std::size_t(f.width) * f.height);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.37f - 11.0f;
  const auto decoded = decode_tiff(write_tiff(f, raw(values), "float.tif"));
  ASSERT_TRUE(std::holds_alternative<FloatImage>(decoded));
  EXPECT_EQ(std::get<FloatImage>(decoded).samples, values);
  const LoadedArray l = load_array(write_tiff(f, raw(values), "float2.tif"));
  EXPECT_FALSE(l.normalized);
  EXPECT_EQ(std::get<std::vector<float>>(l.array.values), values);

  TiffSpec white;
  white.samples = 1;
  white.photometric = PHOTOMETRIC_MINISWHITE;
  const std::vector<unsigned char> gray = {0, 10, 255, 128};
  white.width = 2;
  white.height = 2;
  const Image im = std::get<Image>(decode_tiff(write_tiff(white, gray, "white.tif")));
  EXPECT_EQ(im.samples, (std::vector<std::uint16_t>{255, 245, 0, 127}));
}

TEST(Tiff, RejectsWhatItDoesNotRead) {
  TiffSpec pal;
  pal.samples = 1;
  pal.photometric = PHOTOMETRIC_SEPARATED;  // CMYK-like with one sample: unsupported photometric
  EXPECT_THROW(decode_tiff(write_tiff(pal, std::vector<unsigned char>(13 * 9, 1), "sep.tif")), Error);
  TiffSpec i32;
  i32.samples = 1;
  i32.bits = 32;
  i32.photometric = PHOTOMETRIC_MINISBLACK;
  EXPECT_THROW(decode_tiff(write_tiff(i32, std::vector<unsigned char>(13 * 9 * 4, 1), "i32.tif")), Error);
  const auto good = write_tiff(TiffSpec{}, std::vector<unsigned char>(13 * 9 * 3, 9), "good.tif");
  EXPECT_NO_THROW(decode_tiff(good));
  EXPECT_THROW(decode_tiff(std::span(good).first(good.size() - 20)), Error);
  EXPECT_THROW(decode_tiff(bytes_of("II*\0\x08\0\0\0")), Error);
  EXPECT_THROW(decode_tiff(bytes_of("MM\0*")), Error);
}

// A tile's size is a header field: a few bytes could otherwise make the reader allocate 100 GB (found by the
// "formats" fuzzer). Tiles larger than the image are read (they pad its edges) up to max(image, 16 MiB).
std::vector<std::byte> one_pixel_in_a_tile(std::uint32_t tile, const std::string& name) {
  TiffSpec s;
  s.width = s.height = 1;
  s.samples = 1;
  s.photometric = PHOTOMETRIC_MINISBLACK;
  s.compression = COMPRESSION_ADOBE_DEFLATE;  // a flat tile compresses to a few bytes
  s.tile = tile;
  return write_tiff(s, {77}, name);
}

TEST(Tiff, ReadsTilesLargerThanTheImageUpToALimit) {
  const auto small = one_pixel_in_a_tile(1024, "tile1024.tif");  // 1 MiB tile for one pixel: read
  const auto im = std::get<Image>(decode_tiff(small));
  EXPECT_EQ(im.width, 1);
  EXPECT_EQ(im.samples, std::vector<std::uint16_t>{77});
  const auto big = one_pixel_in_a_tile(8192, "tile8192.tif");  // 64 MiB tile for one pixel: refused unread
  try {
    decode_tiff(big);
    ADD_FAILURE() << "a 64 MiB tile for a 1x1 image was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("8192x8192 tile of 67108864 bytes for a 1x1 image"), std::string::npos)
        << e.what();
  }
}

// ---- JPEG, written with libjpeg ----

std::vector<std::byte> write_jpeg(int w, int h, int components, J_COLOR_SPACE space, const std::vector<unsigned char>& px) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = JDIMENSION(w);
  c.image_height = JDIMENSION(h);
  c.input_components = components;
  c.in_color_space = space;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(px.data()) + std::size_t(c.next_scanline) * std::size_t(w * components);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<std::byte> b(size);
  std::memcpy(b.data(), out, size);
  std::free(out);
  return b;
}

TEST(Jpeg, DecodesGrayAndColorAndRejectsCmykAndTruncation) {
  std::vector<unsigned char> flat(16 * 8, 100);
  const Image g = decode_jpeg(write_jpeg(16, 8, 1, JCS_GRAYSCALE, flat));
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.width, 16);
  EXPECT_EQ(g.height, 8);
  for (auto s : g.samples) EXPECT_NEAR(s, 100, 1);  // a flat image survives quality 100 within rounding
  std::vector<unsigned char> rgb(8 * 8 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<unsigned char>(i % 3 == 0 ? 200 : 40);
  const auto color = write_jpeg(8, 8, 3, JCS_RGB, rgb);
  const Image c = decode_jpeg(color);
  EXPECT_EQ(c.channels, 3);
  EXPECT_NEAR(c.samples[0], 200, 3);
  EXPECT_NEAR(c.samples[1], 40, 3);
  EXPECT_EQ(jpeg_info(color).channels, 3);
  EXPECT_EQ(probe_array(color).shape, (std::vector<std::size_t>{1, 3, 8, 8}));
  EXPECT_THROW(decode_jpeg(write_jpeg(8, 8, 4, JCS_CMYK, std::vector<unsigned char>(8 * 8 * 4, 9))), Error);
  EXPECT_THROW(decode_jpeg(std::span(color).first(color.size() / 2)), Error);
  EXPECT_THROW(decode_jpeg(bytes_of("\xff\xd8\xff")), Error);
}

// ---- WebP, written with libwebp ----

TEST(Webp, LosslessRoundTripIsExactAndAlphaIsReported) {
  const int w = 11, h = 7;
  std::vector<std::uint8_t> rgba = pattern<std::uint8_t>(std::size_t(w) * h * 4, 3, 255);
  for (std::size_t i = 3; i < rgba.size(); i += 4) rgba[i] |= 1;  // libwebp may change the colour of alpha-0 pixels
  std::uint8_t* out = nullptr;
  const std::size_t size = WebPEncodeLosslessRGBA(rgba.data(), w, h, w * 4, &out);
  ASSERT_GT(size, 0u);
  std::vector<std::byte> b(size);
  std::memcpy(b.data(), out, size);
  WebPFree(out);
  const Image im = decode_webp(b);
  EXPECT_EQ(im.channels, 4);
  EXPECT_EQ(im.samples, std::vector<std::uint16_t>(rgba.begin(), rgba.end()));
  const LoadedArray l = load_array(b);
  EXPECT_TRUE(l.alpha);
  EXPECT_EQ(l.array.shape, (std::vector<std::size_t>{1, 3, 7, 11}));
  EXPECT_THROW(decode_webp(std::span(b).first(b.size() - 10)), Error);
  EXPECT_THROW(decode_webp(bytes_of("RIFF\x04\0\0\0WEBP")), Error);
}

// ---- OpenEXR, written with the OpenEXR library ----

std::vector<std::byte> write_exr(int w, int h, const std::vector<std::string>& names, const std::vector<std::vector<float>>& planes,
                                 Imf::PixelType type) {
  const fs::path p = temp_path("x.exr");
  Imf::Header header(w, h);
  header.compression() = Imf::ZIP_COMPRESSION;
  for (const auto& n : names) header.channels().insert(n, Imf::Channel(type));
  std::vector<std::vector<half>> halves;
  Imf::FrameBuffer fb;
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (type == Imf::HALF) {
      halves.emplace_back(planes[c].begin(), planes[c].end());
      fb.insert(names[c], Imf::Slice(Imf::HALF, reinterpret_cast<char*>(halves.back().data()), sizeof(half),
                                     sizeof(half) * std::size_t(w)));
    } else {
      fb.insert(names[c], Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(const_cast<float*>(planes[c].data())),
                                     sizeof(float), sizeof(float) * std::size_t(w)));
    }
  }
  {
    Imf::OutputFile file(p.string().c_str(), header);
    file.setFrameBuffer(fb);
    file.writePixels(h);
  }
  auto b = file_bytes(p);
  fs::remove(p);
  return b;
}

TEST(Exr, ReadsRgbaAndYChannelsAsStored) {
  const int w = 9, h = 5;
  std::vector<std::vector<float>> planes(4, std::vector<float>(std::size_t(w) * h));
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t i = 0; i < planes[c].size(); ++i) planes[c][i] = float(c) * 10.0f + float(i) * 0.25f;
  const auto rgba = write_exr(w, h, {"R", "G", "B", "A"}, planes, Imf::FLOAT);
  const FloatImage im = decode_exr(rgba);
  ASSERT_EQ(im.channels, 4);
  for (std::size_t i = 0; i < planes[0].size(); ++i)
    for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(im.samples[i * 4 + c], planes[c][i]);
  EXPECT_TRUE(load_array(rgba).alpha);
  const auto y = write_exr(w, h, {"Y"}, {planes[1]}, Imf::HALF);
  const FloatImage g = decode_exr(y);
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.samples[3], float(half(planes[1][3])));
  EXPECT_EQ(exr_info(y).channels, 1);
  EXPECT_THROW(decode_exr(write_exr(w, h, {"Z"}, {planes[0]}, Imf::FLOAT)), Error);
  EXPECT_THROW(decode_exr(std::span(rgba).first(rgba.size() - 30)), Error);
  EXPECT_THROW(decode_exr(bytes_of("\x76\x2f\x31\x01\x02\0\0\0")), Error);
}

// ---- PFM, by hand ----

std::vector<std::byte> pfm(const std::string& header, const std::vector<float>& values, bool little) {
  std::vector<std::byte> b = bytes_of(header);
  for (float v : values) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    for (int k = 0; k < 4; ++k) b.push_back(std::byte((u >> (8 * (little ? k : 3 - k))) & 0xff));
  }
  return b;
}

TEST(Pfm, ReadsBottomUpRowsInEitherByteOrder) {
  const std::vector<float> rows = {1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f};  // 3 x 2, stored bottom row first
  for (bool little : {true, false}) {
    const FloatImage im = decode_pfm(pfm(std::string("Pf\n3 2\n") + (little ? "-1.0\n" : "1.0\n"), rows, little));
    EXPECT_EQ(im.channels, 1);
    EXPECT_EQ(im.samples, (std::vector<float>{4.0f, 5.0f, 6.0f, 1.5f, -2.0f, 3.25f}));
  }
  const FloatImage rgb = decode_pfm(pfm("PF\n1 1\n-1\n", {0.1f, 0.2f, 0.3f}, true));
  EXPECT_EQ(rgb.channels, 3);
  EXPECT_THROW(decode_pfm(pfm("Pf\n3 2\n-1.0\n", {1, 2, 3, 4, 5}, true)), Error);        // truncated
  EXPECT_THROW(decode_pfm(pfm("Pf\n1 1\n-1.0\n", {1, 2}, true)), Error);                 // trailing bytes
  EXPECT_THROW(decode_pfm(pfm("Pf\n1 1\n0\n", {1}, true)), Error);                       // zero scale
  EXPECT_THROW(decode_pfm(pfm("Pf\n01 1\n-1\n", {1}, true)), Error);                     // leading zero
  EXPECT_THROW(decode_pfm(pfm("Pf\n1 1\nnan\n", {1}, true)), Error);                     // NaN scale
  EXPECT_THROW(decode_pfm(bytes_of("Pf\n999999999 999999999\n-1\n")), Error);           // too large
}

// ---- the rest ----

TEST(Png, GrayPaletteLoadsAsOneChannel) {
  // A 2x1 palette PNG (entries gray 0 and gray 200) and one with a coloured entry.
  auto make = [](unsigned char green) {
    std::vector<std::byte> ihdr;
    test::put_be32(ihdr, 2);
    test::put_be32(ihdr, 1);
    for (int v : {8, 3, 0, 0, 0}) ihdr.push_back(std::byte(v));
    const std::vector<std::byte> plte = {std::byte(0), std::byte(0), std::byte(0), std::byte(200), std::byte(green), std::byte(200)};
    const unsigned char raw[] = {0, 0, 1};
    unsigned char z[64];
    uLongf zlen = sizeof z;
    compress(z, &zlen, raw, sizeof raw);
    std::vector<std::byte> idat(zlen);
    std::memcpy(idat.data(), z, zlen);
    auto png = bytes_of("\x89PNG\r\n\x1a\n");
    png = test::concat(png, test::png_chunk("IHDR", ihdr));
    png = test::concat(png, test::png_chunk("PLTE", plte));
    png = test::concat(png, test::png_chunk("IDAT", idat));
    return test::concat(png, test::png_chunk("IEND", {}));
  };
  const Image gray = decode_png(make(200));
  EXPECT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.samples, (std::vector<std::uint16_t>{0, 200}));
  EXPECT_EQ(probe_array(make(200)).shape, (std::vector<std::size_t>{1, 1, 1, 2}));
  EXPECT_EQ(decode_png(make(201)).channels, 3);
}

TEST(ParallelDeflate, IsOneZlibStreamForAnyThreadCount) {
  for (std::size_t size : {std::size_t(0), std::size_t(1), std::size_t(3) << 20, (std::size_t(5) << 20) + 7}) {
    std::vector<unsigned char> data(size);
    for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<unsigned char>((i * 2654435761u) >> 13) & 0x3f;
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      SCOPED_TRACE(std::to_string(size) + " bytes, " + std::to_string(threads) + " threads");
      const auto z = zlib_compress_parallel(data, 1, threads);
      std::vector<unsigned char> back(size + 1);
      uLongf got = uLongf(back.size());
      ASSERT_EQ(uncompress(back.data(), &got, z.data(), uLong(z.size())), Z_OK);  // checks the Adler-32 too
      back.resize(got);
      EXPECT_EQ(back, data);
    }
  }
}

// Units produced on demand (the map PNG's rows): any unit size, including units larger than a thread's
// batch and no units at all, give one stream of the units in order.
TEST(ParallelDeflate, ProducedUnitsAreOneZlibStream) {
  for (auto [units, unit_bytes] : {std::pair<std::size_t, std::size_t>{0, 7}, {1, 1}, {3000, 1001},
                                   {5, (std::size_t(1) << 20) + 3}}) {
    SCOPED_TRACE(std::to_string(units) + " units of " + std::to_string(unit_bytes) + " bytes");
    auto byte = [](std::size_t i) { return static_cast<unsigned char>(((i * 2654435761u) >> 13) & 0x3f); };
    for (unsigned threads : {1u, 2u, 3u}) {
      const auto parts = zlib_compress_units(
          units, unit_bytes,
          [&](std::size_t first, std::size_t count, unsigned char* dst) {
            for (std::size_t i = 0; i < count * unit_bytes; ++i) dst[i] = byte(first * unit_bytes + i);
          },
          1, threads);
      std::vector<unsigned char> z;
      for (const auto& p : parts) z.insert(z.end(), p.begin(), p.end());
      std::vector<unsigned char> back(units * unit_bytes + 1);
      uLongf got = uLongf(back.size());
      ASSERT_EQ(uncompress(back.data(), &got, z.data(), uLong(z.size())), Z_OK);  // checks the Adler-32 too
      ASSERT_EQ(got, units * unit_bytes);
      for (std::size_t i = 0; i < got; ++i) ASSERT_EQ(back[i], byte(i)) << "byte " << i;
    }
  }
}

TEST(ImageSize, LimitsAreCheckedBeforeDecoding) {
  EXPECT_NO_THROW(check_image_size("T", 100, 100, 3));
  EXPECT_THROW(check_image_size("T", 0, 100, 3), Error);
  EXPECT_THROW(check_image_size("T", 100, 100, 5), Error);
  EXPECT_THROW(check_image_size("T", max_image_samples, 2, 1), Error);
  EXPECT_THROW(check_image_size("T", std::uint64_t(1) << 40, std::uint64_t(1) << 40, 1), Error);
}

}  // namespace
}  // namespace kssim::io
