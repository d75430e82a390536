#pragma once
// Loading one input of `kssim compare`: the format is recognised from the file's first bytes (not its
// name), so .npy arrays, PNG images and PGM/PPM images can be given under any file name.

#include "io/Array.hpp"

#include <cstddef>
#include <filesystem>
#include <span>

namespace kssim::io {

enum class Format { Npy, Png, Pnm };

// "npy", "png" or "pnm".
const char* format_name(Format format);

struct LoadedArray {
  Array array;    // images: float32 (1, C, H, W) in [0, 1], alpha dropped; .npy: as stored
  Format format;
  bool is_image() const { return format != Format::Npy; }
};

// Parses a file held in memory; throws io::Error for unknown formats and bad files. Safe to fuzz.
LoadedArray load_array(std::span<const std::byte> bytes);

// Reads and parses a file; throws io::Error.
LoadedArray load_array_file(const std::filesystem::path& path);

}  // namespace kssim::io
