// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Loading one input of `kssim compare`: the format is recognised from the file's first bytes (not its
// name), so .npy arrays and images (PNG, PGM/PPM, JPEG, TIFF, WebP, OpenEXR, PFM) can be given under any
// file name. probe_array() reads only the header, so that two inputs' shapes can be compared before either
// is decoded.

#include "io/Array.hpp"

#include <cstddef>
#include <filesystem>
#include <span>

namespace kssim::io {

enum class Format { Npy, Png, Pnm, Jpeg, Tiff, Webp, Exr, Pfm };

// "npy", "png", "pnm", "jpeg", "tiff", "webp", "exr" or "pfm".
const char* format_name(Format format);

struct LoadedArray {
  Array array;    // images: float32 (1, C, H, W), alpha dropped; .npy: as stored
  Format format;
  bool alpha = false;       // the image had an alpha channel (dropped)
  bool normalized = false;  // integer samples divided by their maximum: values in [0, 1]
  bool widened = false;     // a float16 .npy, widened to float32 (exactly)
  bool is_image() const { return format != Format::Npy; }
};

// What load_array() would return, less the values: from the header only.
struct ArrayInfo {
  Format format;
  DType dtype;  // of the loaded values: Float32 for a float16 .npy
  std::vector<std::size_t> shape;
  bool alpha = false;
  bool widened = false;  // a float16 .npy (LoadedArray::widened)
  bool is_image() const { return format != Format::Npy; }
  // The dtype as stored: "float16" for a widened .npy, else dtype_name(dtype).
  const char* stored_dtype_name() const { return widened ? dtype_name(DType::Float16) : dtype_name(dtype); }
};

// Parses a file held in memory; throws io::Error for unknown formats and bad files. Safe to fuzz.
LoadedArray load_array(std::span<const std::byte> bytes);

// The format, dtype and shape of a file held in memory, from its header: cheap for every format (PNM and
// PFM, whose decoding costs about as much as reading them, are decoded). Throws io::Error like load_array
// for a bad header; a file whose header is good may still fail to load.
ArrayInfo probe_array(std::span<const std::byte> bytes);

// Reads and parses a file; throws io::Error.
LoadedArray load_array_file(const std::filesystem::path& path);

}  // namespace kssim::io
