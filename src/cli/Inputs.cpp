// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Inputs.hpp"

#include "cli/NumberText.hpp"
#include "cli/UsageError.hpp"
#include "io/Error.hpp"
#include "io/File.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace kssim::cli {
namespace {

std::vector<std::byte> read_input(const Input& input) {
  try {
    return io::read_file(input.path);
  } catch (const io::Error& e) {
    throw io::Error(input.label.substr(0, input.label.find(' ')) + ": " + e.what());
  }
}

}  // namespace

Input probe_input(const std::string& name, const std::string& path, int dims, const std::string& channel_axis,
                  bool keep) {
  Input in;
  in.path = path;
  in.label = name + " '" + path + "'";
  std::vector<std::byte> bytes = read_input(in);
  try {
    in.info = io::probe_array(bytes);
  } catch (const io::Error& e) {
    throw io::Error(in.label + ": " + e.what());
  }
  if (dims == 3 && in.info.is_image())
    throw UsageError("--dims 3 needs volumes, but " + in.label + " is a 2D " + io::format_name(in.info.format) +
                     " image; give .npy arrays of shape (D, H, W), (C, D, H, W) or (N, C, D, H, W)");
  if (!in.info.is_image()) in.axis = channel_axis_of(in.label, in.info.shape, dims, channel_axis);
  in.shape = channels_first_shape(in.info.shape, dims, in.axis);
  if (keep || path == io::stdin_path) in.kept = std::move(bytes);
  return in;
}

io::LoadedArray load_input(Input& input, int dims) {
  io::LoadedArray loaded;
  {
    const std::vector<std::byte> bytes = input.kept.empty() ? read_input(input) : std::move(input.kept);
    input.kept.clear();
    try {
      loaded = io::load_array(bytes);
    } catch (const io::Error& e) {
      throw io::Error(input.label + ": " + e.what());
    }
  }
  if (loaded.format != input.info.format || loaded.array.dtype() != input.info.dtype ||
      loaded.widened != input.info.widened || loaded.array.shape != input.info.shape)
    throw io::Error(input.label + ": the file changed while it was being read, or its content does not match its "
                    "header (" + io::shape_string(loaded.array.shape) + " instead of " +
                    io::shape_string(input.info.shape) + ")");
  loaded.array = channels_first(std::move(loaded.array), dims, input.axis);
  std::visit(
      [&](const auto& values) {
        using T = typename std::decay_t<decltype(values)>::value_type;
        T low = values.empty() ? T(0) : values[0], high = low;
        bool finite = true;
        for (const T v : values) {  // one pass: finiteness (NaN fails both comparisons below) and range
          finite &= bool(std::isfinite(v));
          low = v < low ? v : low;
          high = v > high ? v : high;
        }
        if (!finite) {
          const auto bad = std::find_if(values.begin(), values.end(), [](T v) { return !std::isfinite(v); });
          throw UsageError(input.label + " contains NaN or infinite values (first at flat index " +
                           std::to_string(bad - values.begin()) + ")");
        }
        input.low = double(low);
        input.high = double(high);
      },
      loaded.array.values);
  return loaded;
}

std::vector<int> normalized_extents(const Input& input, int dims) {
  const auto& shape = input.shape;
  const std::size_t target = dims == 2 ? 4 : 5;
  if (shape.size() < target - 2 || shape.size() > target)
    throw UsageError(input.label + " has shape " + io::shape_string(input.info.shape) + "; with --dims " +
                     std::to_string(dims) + " arrays must be " +
                     (dims == 2 ? "(H, W), (C, H, W) or (N, C, H, W), or (H, W, C) or (N, H, W, C) with "
                                  "--channel-axis last"
                                : "(D, H, W), (C, D, H, W) or (N, C, D, H, W), or (D, H, W, C) or (N, D, H, W, C) "
                                  "with --channel-axis last"));
  std::vector<int> e(target - shape.size(), 1);
  for (std::size_t s : shape) {
    if (s == 0) throw UsageError(input.label + " is empty: shape " + io::shape_string(input.info.shape));
    if (s > std::size_t(INT_MAX)) throw UsageError(input.label + " is too large");
    e.push_back(int(s));
  }
  return e;
}

std::optional<std::string> data_range_warning(const Input& input, const io::LoadedArray& loaded, double data_range) {
  const double lo = input.low, hi = input.high;
  const double span = hi - lo;
  const std::string values = input.label + " has values from " + number_text(lo) + " to " + number_text(hi) + " (a span of " +
                             number_text(span) + ")";
  if (span > data_range)
    return values + ", more than --data-range " + number_text(data_range) +
           ": SSIM's constants assume values within the data range; give --data-range (e.g. 255 for 8-bit data)";
  if (!loaded.normalized && span * 20 < data_range)
    return values + ", far below --data-range " + number_text(data_range) +
           ": SSIM's constants C1 and C2 will dominate; give the data's true range with --data-range";
  return std::nullopt;
}

}  // namespace kssim::cli
