// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A strict reader and writer of NumPy .npy files (format versions 1.0, 2.0 and 3.0) holding little-endian
// float32 ('<f4') or float64 ('<f8') arrays in C order; the reader also takes float16 ('<f2') arrays and
// widens them to float32 (exactly). Anything else (other dtypes, big-endian data, Fortran order, object
// arrays, a malformed header, missing or extra data bytes) throws io::Error.

#include "io/Array.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace kssim::io {

// Parses a whole .npy file held in memory. Never reads outside `bytes`, and allocates only after checking
// that the file holds all the data its header announces, so it is safe to fuzz.
Array parse_npy(std::span<const std::byte> bytes);

// The dtype (as stored: Float16 for '<f2') and shape from the header alone (the data is not checked), and
// where the data starts.
struct NpyInfo {
  DType dtype;
  std::vector<std::size_t> shape;
  std::size_t data_offset = 0;  // bytes from the start of the file
};
NpyInfo npy_info(std::span<const std::byte> bytes);

// Serialises `array` as a version 1.0 .npy file (2.0 if the header would not fit), C order, little-endian.
std::vector<std::byte> encode_npy(const Array& array);

// The header alone (magic, version, length, dictionary): the data of `shape` in C order follows it.
std::vector<std::byte> encode_npy_header(DType dtype, const std::vector<std::size_t>& shape);

// True when `bytes` starts with the .npy magic string.
bool looks_like_npy(std::span<const std::byte> bytes);

}  // namespace kssim::io
