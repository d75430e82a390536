// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// WebP reading through libwebp (lossy and lossless, still images): always 3 channels (RGB) or 4 (RGBA, when
// the file has alpha), 8 bits. Animated files and corrupt or truncated files throw io::Error.

#include "io/Image.hpp"

#include <cstddef>
#include <span>

namespace kssim::io {

// The size and channel count from the header (libwebp's WebPGetFeatures), without decoding the pixels.
ImageInfo webp_info(std::span<const std::byte> bytes);

// Decodes a whole WebP file held in memory (max_value 255). Checks the size against max_image_samples
// before decoding, so it is safe to fuzz.
Image decode_webp(std::span<const std::byte> bytes);

// True when `bytes` starts with a RIFF header of form WEBP.
bool looks_like_webp(std::span<const std::byte> bytes);

}  // namespace kssim::io
