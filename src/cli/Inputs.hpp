// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The inputs of `kssim compare`: read (a file or "-" for the standard input), probed from their headers
// (format, dtype, shape, channel axis) so that shapes are compared before anything is decoded, then
// decoded into kssim's channel-first layout and checked (finite values, data range).

#include "cli/ChannelAxis.hpp"
#include "io/Load.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kssim::cli {

struct Input {
  std::string label;  // "A 'a.png'", for messages
  std::string path;   // as given; "-" is the standard input
  io::ArrayInfo info;                  // from the header
  ChannelAxis axis = ChannelAxis::First;
  std::vector<std::size_t> shape;      // channel-first
  std::vector<std::byte> kept;         // the bytes read by probe_input, until load_input uses them
  double low = 0, high = 0;            // the values' range, set by load_input
};

// Reads and probes an input; throws io::Error or UsageError (ambiguous channel axis). The bytes are kept for
// load_input when `keep` (or when they come from the standard input, which cannot be read twice); otherwise
// load_input reads the file again (`kssim compare REF D1 ... D1000` holds one decoded D at a time).
Input probe_input(const std::string& name, const std::string& path, int dims, const std::string& channel_axis,
                  bool keep);

// Decodes an input into kssim's layout (channel-first, same dtype) and checks that its content matches its
// header's promise and that every value is finite (and notes their range); throws io::Error or UsageError.
io::LoadedArray load_input(Input& input, int dims);

// kssim's rank-4/5 extents for an input's channel-first shape, or a UsageError.
std::vector<int> normalized_extents(const Input& input, int dims);

// A one-line warning when the values' span does not fit --data-range: larger than it, or, for data not
// normalised from integer samples, smaller than a twentieth of it. Nothing otherwise.
std::optional<std::string> data_range_warning(const Input& input, const io::LoadedArray& loaded, double data_range);

}  // namespace kssim::cli
