// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Mask.hpp"

#include "cli/NumberText.hpp"
#include "cli/UsageError.hpp"

#include <algorithm>
#include <cmath>

namespace kssim::cli {
namespace {

std::string extents_text(const std::vector<int>& e) {
  return io::shape_string(std::vector<std::size_t>(e.begin(), e.end()));
}

}  // namespace

Input probe_mask(const std::string& path, int dims, const std::string& channel_axis, const std::vector<int>& extents) {
  Input mask = probe_input("mask", path, dims, channel_axis, true);
  const std::vector<int> m = normalized_extents(mask, dims);
  bool ok = m.size() == extents.size() && (m[0] == 1 || m[0] == extents[0]) && (m[1] == 1 || m[1] == extents[1]);
  for (std::size_t i = 2; ok && i < m.size(); ++i) ok = m[i] == extents[i];
  if (!ok) {
    std::vector<int> one = extents;
    one[0] = one[1] = 1;
    throw UsageError(mask.label + " has shape " + io::shape_string(mask.info.shape) + " (channel-first " +
                     extents_text(m) + "); it must have the inputs' extents " + extents_text(extents) +
                     ", with 1 or " + std::to_string(extents[1]) + " channels and 1 or " + std::to_string(extents[0]) +
                     " images, e.g. " + extents_text(one));
  }
  return mask;
}

io::Array load_mask(Input& mask, int dims, const std::vector<int>& extents, io::DType dtype) {
  const io::LoadedArray loaded = load_input(mask, dims);  // also refuses NaN and infinity
  const std::vector<int> m = normalized_extents(mask, dims);
  std::vector<double> values = std::visit([](const auto& v) { return std::vector<double>(v.begin(), v.end()); },
                                          loaded.array.values);
  const auto bad = std::find_if(values.begin(), values.end(), [](double v) { return !(v >= 0 && v <= 1); });
  if (bad != values.end())
    throw UsageError(mask.label + " has the value " + number_text(*bad) + " at flat index " +
                     std::to_string(bad - values.begin()) + ": mask values must be in [0, 1]");
  const std::size_t per_image = values.size() / std::size_t(m[0]);
  std::vector<std::size_t> shape(m.begin(), m.end());
  shape[0] = std::size_t(extents[0]);
  std::vector<double> repeated;
  repeated.reserve(per_image * shape[0]);
  for (std::size_t n = 0; n < shape[0]; ++n)
    repeated.insert(repeated.end(), values.begin() + std::ptrdiff_t(m[0] == 1 ? 0 : n * per_image),
                    values.begin() + std::ptrdiff_t((m[0] == 1 ? 0 : n * per_image) + per_image));
  if (dtype == io::DType::Float64) return io::Array(shape, std::move(repeated));
  return io::Array(shape, std::vector<float>(repeated.begin(), repeated.end()));
}

}  // namespace kssim::cli
