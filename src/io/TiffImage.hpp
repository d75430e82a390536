// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// TIFF reading through libtiff: the first (and only) image of a file, gray (min-is-black or min-is-white),
// gray + alpha, RGB or RGBA, with 8- or 16-bit unsigned integer samples (an io::Image) or 32-bit IEEE float
// samples (an io::FloatImage, values as stored: scientific data), in strips or tiles, contiguous or
// separate planes, with any compression libtiff decodes. Palette, YCbCr, CMYK, Lab, 1-bit, 32-bit integer
// and 64-bit float files, multi-page files, and corrupt or truncated files throw io::Error.

#include "io/Image.hpp"

#include <cstddef>
#include <span>
#include <variant>

namespace kssim::io {

// The size, channel count and sample kind from the first directory, without decoding the pixels.
ImageInfo tiff_info(std::span<const std::byte> bytes);

// Decodes the image of a TIFF file held in memory. Never reads outside `bytes` and checks the size against
// max_image_samples before allocating, so it is safe to fuzz.
std::variant<Image, FloatImage> decode_tiff(std::span<const std::byte> bytes);

// True when `bytes` starts with a classic or BigTIFF header ("II*\0", "MM\0*", "II+\0", "MM\0+").
bool looks_like_tiff(std::span<const std::byte> bytes);

}  // namespace kssim::io
