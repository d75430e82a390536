// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Report.hpp"

#include "cli/NumberText.hpp"

#include <kssim/MSSSIMOptions.hpp>

#include <nlohmann/json.hpp>

namespace kssim::cli {
namespace {

nlohmann::ordered_json input_json(const Input& in) {
  nlohmann::ordered_json j = {{"path", in.path}, {"format", io::format_name(in.info.format)}};
  if (in.info.alpha) j["alpha"] = "ignored";
  if (in.info.widened) j["stored_dtype"] = "float16";  // computed in float32 (its "dtype")
  return j;
}

}  // namespace

std::string plain_report(const PairReport& p) {
  const ComputeResult& r = p.result;
  std::string text = number_text(r.mean) + (p.several ? "  " + p.b.path : std::string()) + "\n";
  for (std::size_t n = 0; n < r.per_image.size(); ++n)
    text += "image " + std::to_string(n) + ": " + number_text(r.per_image[n]) + "\n";
  const std::size_t channels = std::size_t(p.extents[1]);
  for (std::size_t k = 0; k < r.per_channel.size(); ++k)
    text += (p.extents[0] > 1 ? "image " + std::to_string(k / channels) + " " : std::string()) + "channel " +
            std::to_string(k % channels) + ": " + number_text(r.per_channel[k]) + "\n";
  if (r.timing)
    text += "timing: repeat=" + std::to_string(r.timing->repeat) + " median_s=" + number_text(r.timing->median_s) +
            " min_s=" + number_text(r.timing->min_s) + "\n";
  return text;
}

std::string json_report(const PairReport& p, const CompareOptions& o, const Options& opts) {
  const ComputeResult& r = p.result;
  nlohmann::ordered_json j;
  j["metric"] = o.metric;
  j["value"] = r.mean;
  if (o.metric == "ssim") j["ssim"] = r.mean;
  if (p.mask) {
    nlohmann::ordered_json mask = input_json(*p.mask);
    mask["shape"] = p.mask->info.shape;
    mask["mode"] = o.mask_mode.empty() ? "weights" : o.mask_mode;
    j["mask"] = mask;
  }
  if (o.metric == "ms-ssim") {
    const MSSSIMOptions ms;
    j["scales"] = ms.scales();
    j["weights"] = ms.weights;
  }
  j["shape"] = p.a.info.shape;
  j["dtype"] = io::dtype_name(p.a.info.dtype);
  j["dims"] = o.dims;
  j["channel_axis"] = p.a.axis == ChannelAxis::Last ? "last" : "first";
  j["padding"] = o.padding;
  j["window"] = opts.window_size;
  j["sigma"] = opts.sigma;
  j["k1"] = opts.k1;
  j["k2"] = opts.k2;
  j["data_range"] = opts.data_range;
  if (o.metric != "ms-ssim") j["map_shape"] = p.map_shape;  // MS-SSIM has no map
  j["backend"] = r.backend;
  j["inputs"] = {{"a", input_json(p.a)}, {"b", input_json(p.b)}};
  nlohmann::ordered_json outputs = nlohmann::ordered_json::object();
  if (!o.map.empty()) outputs["map"] = o.map;
  if (!o.grad_a.empty()) outputs["grad_a"] = o.grad_a;
  if (!o.grad_b.empty()) outputs["grad_b"] = o.grad_b;
  j["outputs"] = outputs;
  if (o.per_image) j["per_image"] = r.per_image;
  if (o.per_channel) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    const std::size_t channels = std::size_t(p.extents[1]);
    for (std::size_t n = 0; n < std::size_t(p.extents[0]); ++n)
      rows.push_back(std::vector<double>(r.per_channel.begin() + std::ptrdiff_t(n * channels),
                                         r.per_channel.begin() + std::ptrdiff_t((n + 1) * channels)));
    j["per_channel"] = rows;
  }
  if (o.threshold) {
    j["threshold"] = *o.threshold;
    j["below_threshold"] = p.below_threshold;
  }
  if (r.timing)
    j["timing"] = {{"repeat", r.timing->repeat}, {"median_s", r.timing->median_s}, {"min_s", r.timing->min_s}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kssim::cli
