// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// PNG reading and writing through libpng. Every PNG color type and bit depth reads: gray and palette images
// of fewer than 8 bits are expanded to 8 bits (palette to RGB, or to gray when every palette entry is gray), 8- and 16-bit samples are kept as they are,
// gray + alpha and RGBA keep their alpha channel, and a palette's transparency (tRNS) becomes one. Gamma
// and color-profile chunks and gray/RGB tRNS color keys are ignored: samples are returned as stored. Truncated or corrupt files (bad signature, CRC errors in
// critical chunks, bad zlib data, missing IEND) throw io::Error; libpng warnings are discarded.

#include "io/Image.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kssim::io {

// The size and channel count from the header chunks (IHDR, PLTE, tRNS), without decoding the pixels.
ImageInfo png_info(std::span<const std::byte> bytes);

// Decodes a whole PNG file held in memory. Never reads outside `bytes` and refuses images whose raw size is
// implausible for the file's size before allocating it, so it is safe to fuzz.
Image decode_png(std::span<const std::byte> bytes);

// tEXt chunks: (keyword, text) pairs, keywords of 1 to 79 Latin-1 characters.
using PngText = std::vector<std::pair<std::string, std::string>>;

// Encodes an image with max_value 255 (8-bit) or 65535 (16-bit) and 1 to 4 channels, with optional text
// chunks, through libpng with its default settings.
std::vector<std::byte> encode_png(const Image& image, const PngText& text = {});

// A picture produced row by row: write_row(y, dst) writes row y's samples (width x channels, 1 or 2 bytes
// each, 16-bit ones big-endian) into dst; it is called from several threads at once, for different rows.
struct PngRows {
  int width = 0, height = 0, channels = 3, bit_depth = 8;
  std::function<void(std::size_t y, unsigned char* dst)> write_row;
};

// Encodes such a picture fast, trading file size for speed: the Sub filter on every row (instead of
// libpng's trial of all five per row) and zlib level 1 on all cores (ParallelDeflate.hpp) instead of level
// 6 on one. Rows are produced, filtered and compressed a few at a time on each thread: the uncompressed
// picture never exists as a whole.
std::vector<std::byte> encode_png_rows(const PngRows& rows, const PngText& text = {});

// True when `bytes` starts with the PNG signature.
bool looks_like_png(std::span<const std::byte> bytes);

}  // namespace kssim::io
