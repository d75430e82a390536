#pragma once
// PNG reading and writing through libpng. Every PNG color type and bit depth reads: gray and palette images
// of fewer than 8 bits are expanded to 8 bits (palette to RGB, or to gray when every palette entry is gray), 8- and 16-bit samples are kept as they are,
// gray + alpha and RGBA keep their alpha channel, and a palette's transparency (tRNS) becomes one. Gamma
// and color-profile chunks and gray/RGB tRNS color keys are ignored: samples are returned as stored. Truncated or corrupt files (bad signature, CRC errors in
// critical chunks, bad zlib data, missing IEND) throw io::Error; libpng warnings are discarded.

#include "io/Image.hpp"

#include <cstddef>
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

// Encodes an image with max_value 255 (8-bit) or 65535 (16-bit) and 1 to 4 channels, with optional tEXt
// chunks (keyword, text; keywords of 1 to 79 Latin-1 characters). `fast` trades file size for speed: the
// Sub filter on every row (instead of libpng's trial of all five per row) and zlib level 1 on all cores
// (ParallelDeflate.hpp) instead of level 6 on one.
std::vector<std::byte> encode_png(const Image& image,
                                  const std::vector<std::pair<std::string, std::string>>& text = {},
                                  bool fast = false);

// True when `bytes` starts with the PNG signature.
bool looks_like_png(std::span<const std::byte> bytes);

}  // namespace kssim::io
