// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A strict reader and writer of Netpbm gray and color images: PGM (P2 plain, P5 binary) and PPM (P3 plain,
// P6 binary), with a maximum sample value from 1 to 65535 (binary samples above 255 are two bytes,
// big-endian). PBM (P1, P4), PAM (P7), multi-image files and anything malformed throw io::Error.

#include "io/Image.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace kssim::io {

// Parses a whole PGM/PPM file held in memory: 1 channel for PGM, 3 for PPM. Never reads outside `bytes`,
// and allocates only after checking that the file can hold the announced samples, so it is safe to fuzz.
Image decode_pnm(std::span<const std::byte> bytes);

// Writes a 1-channel image as PGM and a 3-channel image as PPM: binary (P5/P6) by default, plain ASCII
// (P2/P3) if `plain`. Images with alpha throw io::Error.
std::vector<std::byte> encode_pnm(const Image& image, bool plain = false);

// True when `bytes` starts like a Netpbm file ('P' and a digit 1-7).
bool looks_like_pnm(std::span<const std::byte> bytes);

}  // namespace kssim::io
