// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Whole-file reading, and all-or-nothing writing of a set of output files.

#include <cstddef>
#include <filesystem>
#include <utility>
#include <vector>

namespace kssim::io {

// The path that stands for the standard input.
inline const std::filesystem::path stdin_path = "-";

// The whole content of a regular file, or of the standard input for "-"; throws io::Error naming the path
// and the reason.
std::vector<std::byte> read_file(const std::filesystem::path& path);

struct OutputFile {
  std::filesystem::path path;
  std::vector<std::byte> bytes;
};

// Writes every file under a temporary name in its target directory, then renames them all into place. If
// any write fails, every temporary file is removed and io::Error is thrown: no output appears half written.
void write_files(const std::vector<OutputFile>& files);

}  // namespace kssim::io
