// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A strict reader of Portable Float Maps (PFM): "PF" (RGB) or "Pf" (gray), width, height and a scale whose
// sign gives the byte order (negative: little-endian), each followed by one whitespace character as
// written by every PFM writer, then width x height x channels 32-bit floats, rows from the bottom up. The
// values are returned as stored, rows top-down; the scale's magnitude is ignored (as most readers do).
// Anything malformed, truncated or followed by extra bytes throws io::Error.

#include "io/Image.hpp"

#include <cstddef>
#include <span>

namespace kssim::io {

// Parses a whole PFM file held in memory. Never reads outside `bytes`, and allocates only after checking
// that the file holds the announced samples, so it is safe to fuzz.
FloatImage decode_pfm(std::span<const std::byte> bytes);

// True when `bytes` starts with "PF" or "Pf" and a whitespace character.
bool looks_like_pfm(std::span<const std::byte> bytes);

}  // namespace kssim::io
