// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// OpenEXR reading through the OpenEXR library (scan-line and tiled, any compression, half/float/uint
// channels converted to float by the library): channels R, G, B (RGB) or Y (gray), with an optional A
// (alpha), read over the data window at full resolution. Values are kept as stored (scene-linear HDR data:
// give --data-range). Other channel sets (layers only, chroma-subsampled RY/BY, deep images) and corrupt,
// truncated or incomplete files throw io::Error.

#include "io/Image.hpp"

#include <cstddef>
#include <span>

namespace kssim::io {

// The size and channel count from the header, without decoding the pixels.
ImageInfo exr_info(std::span<const std::byte> bytes);

// Decodes the first part of an OpenEXR file held in memory. Checks the size against max_image_samples
// before allocating, so it is safe to fuzz.
FloatImage decode_exr(std::span<const std::byte> bytes);

// True when `bytes` starts with the OpenEXR magic number (76 2F 31 01).
bool looks_like_exr(std::span<const std::byte> bytes);

}  // namespace kssim::io
