// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// JPEG reading through libjpeg-turbo: 8-bit gray (1 channel) and color (3 channels, YCbCr converted to RGB
// by the library) baseline and progressive files. CMYK/YCCK files throw io::Error, as do corrupt or
// truncated files: libjpeg's "premature end of data" and corrupt-data warnings, after which it would pad the
// image with gray, are errors here (only "extraneous bytes before a marker", which changes no pixel, is not).

#include "io/Image.hpp"

#include <cstddef>
#include <span>

namespace kssim::io {

// The size and channel count from the header, without decoding the pixels.
ImageInfo jpeg_info(std::span<const std::byte> bytes);

// Decodes a whole JPEG file held in memory (max_value 255). Never reads outside `bytes` and checks the size
// against max_image_samples before allocating, so it is safe to fuzz.
Image decode_jpeg(std::span<const std::byte> bytes);

// True when `bytes` starts with a JPEG SOI marker followed by another marker (FF D8 FF).
bool looks_like_jpeg(std::span<const std::byte> bytes);

}  // namespace kssim::io
