#include "cli/Compare.hpp"

#include "cli/Colormap.hpp"
#include "cli/Compute.hpp"
#include "cli/UsageError.hpp"
#include "io/Error.hpp"
#include "io/File.hpp"
#include "io/Load.hpp"
#include "io/Npy.hpp"
#include "io/PngImage.hpp"

#include <kssim/Options.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#ifndef KSSIM_VERSION
#define KSSIM_VERSION "unknown"
#endif

namespace kssim::cli {
namespace {

namespace fs = std::filesystem;

std::string format_double(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::string number_text(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

Options validated_options(const CompareOptions& o) {
  Options opts;
  if (o.window < 3 || o.window % 2 == 0 || o.window > max_window_size)
    throw UsageError("--window must be an odd integer from 3 to " + std::to_string(max_window_size) + ", got " +
                     std::to_string(o.window));
  if (!std::isfinite(o.sigma) || o.sigma <= 0)
    throw UsageError("--sigma must be a finite number > 0, got " + number_text(o.sigma));
  if (!std::isfinite(o.data_range) || o.data_range <= 0)
    throw UsageError("--data-range must be a finite number > 0, got " + number_text(o.data_range));
  if (!std::isfinite(o.k1) || o.k1 < 0) throw UsageError("--k1 must be a finite number >= 0, got " + number_text(o.k1));
  if (!std::isfinite(o.k2) || o.k2 < 0) throw UsageError("--k2 must be a finite number >= 0, got " + number_text(o.k2));
  if (o.k1 == 0 && o.k2 == 0) throw UsageError("--k1 and --k2 cannot both be 0 (SSIM would divide by zero)");
  if (o.padding != "valid" && o.padding != "same")
    throw UsageError("unknown --padding '" + o.padding + "' (expected valid or same)");
  if (o.dims != 2 && o.dims != 3) throw UsageError("--dims must be 2 or 3, got " + std::to_string(o.dims));
  if (o.repeat_given && (o.repeat < 1 || o.repeat > 1000000))
    throw UsageError("--repeat must be from 1 to 1000000, got " + std::to_string(o.repeat));
  opts.window_size = o.window;
  opts.sigma = o.sigma;
  opts.k1 = o.k1;
  opts.k2 = o.k2;
  opts.data_range = o.data_range;
  opts.padding = o.padding == "valid" ? Padding::Valid : Padding::Same;
  try {
    validate(opts);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return opts;
}

std::string lower_extension(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return e;
}

// An output path: the right extension, an existing directory to go in, not a directory itself.
void check_output_path(const std::string& option, const std::string& path, std::initializer_list<const char*> exts) {
  const fs::path p(path);
  const std::string ext = lower_extension(p);
  bool ok = false;
  std::string expected;
  for (const char* e : exts) {
    ok = ok || ext == e;
    expected += expected.empty() ? e : std::string(" or ") + e;
  }
  if (!ok) throw UsageError(option + " '" + path + "' must end in " + expected);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError(option + " '" + path + "' is a directory");
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec))
    throw UsageError(option + " '" + path + "': the directory '" + dir.string() + "' does not exist");
}

void check_outputs(const CompareOptions& o) {
  std::set<fs::path> seen;
  auto add = [&](const std::string& option, const std::string& path, std::initializer_list<const char*> exts) {
    if (path.empty()) return;
    check_output_path(option, path, exts);
    std::error_code ec;
    fs::path key = fs::weakly_canonical(fs::path(path), ec);
    if (ec) key = fs::absolute(fs::path(path), ec).lexically_normal();
    if (!seen.insert(key).second) throw UsageError(option + " '" + path + "' names a file already used for another output");
  };
  add("--map", o.map, {".npy", ".png"});
  add("--grad-a", o.grad_a, {".npy"});
  add("--grad-b", o.grad_b, {".npy"});
}

io::LoadedArray load_input(const char* which, const std::string& path) {
  std::vector<std::byte> bytes;
  try {
    bytes = io::read_file(path);
  } catch (const io::Error& e) {
    throw io::Error(std::string(which) + ": " + e.what());
  }
  try {
    return io::load_array(bytes);
  } catch (const io::Error& e) {
    throw io::Error(std::string(which) + " '" + path + "': " + e.what());
  }
}

// The rank-4/5 extents kssim sees for an input of the given shape, or a UsageError.
std::vector<int> normalized_extents(const char* which, const std::string& path, const io::LoadedArray& in, int dims) {
  const auto& shape = in.array.shape;
  if (dims == 3 && in.is_image())
    throw UsageError(std::string("--dims 3 needs volumes, but ") + which + " '" + path + "' is a 2D " +
                     (in.format == io::Format::Png ? "PNG" : "PGM/PPM") + " image; give .npy arrays of shape (D, H, W), (C, D, H, W) or "
                     "(N, C, D, H, W)");
  const std::size_t target = dims == 2 ? 4 : 5;
  if (shape.size() < target - 2 || shape.size() > target)
    throw UsageError(std::string(which) + " '" + path + "' has shape " + io::shape_string(shape) + "; with --dims " +
                     std::to_string(dims) + " arrays must be " +
                     (dims == 2 ? "(H, W), (C, H, W) or (N, C, H, W)" : "(D, H, W), (C, D, H, W) or (N, C, D, H, W)"));
  std::vector<int> e(target - shape.size(), 1);
  for (std::size_t s : shape) {
    if (s == 0) throw UsageError(std::string(which) + " '" + path + "' is empty: shape " + io::shape_string(shape));
    if (s > std::size_t(INT_MAX)) throw UsageError(std::string(which) + " '" + path + "' is too large");
    e.push_back(int(s));
  }
  return e;
}

void check_finite(const char* which, const std::string& path, const io::Array& a) {
  std::visit(
      [&](const auto& values) {
        for (std::size_t i = 0; i < values.size(); ++i)
          if (!std::isfinite(values[i]))
            throw UsageError(std::string(which) + " '" + path + "' contains NaN or infinite values (first at flat index " +
                             std::to_string(i) + ")");
      },
      a.values);
}

std::vector<std::size_t> with_shape_of(const std::vector<std::size_t>& input_shape, const std::vector<int>& extents,
                                       const std::vector<int>& new_extents) {
  // The trailing input axes keep their position; the leading axes the input lacked were 1.
  std::vector<std::size_t> s(input_shape.size());
  const std::size_t offset = extents.size() - input_shape.size();
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::size_t(new_extents[i + offset]);
  return s;
}

io::Array reshaped(io::Array array, std::vector<std::size_t> shape) {
  array.shape = std::move(shape);
  return array;
}

}  // namespace

std::string run_compare(const CompareOptions& o) {
  // 1. Everything that does not need the inputs.
  const Options opts = validated_options(o);
  check_outputs(o);

  // 2. The inputs.
  const io::LoadedArray a = load_input("A", o.a);
  const io::LoadedArray b = load_input("B", o.b);
  const std::vector<int> extents = normalized_extents("A", o.a, a, o.dims);
  normalized_extents("B", o.b, b, o.dims);
  if (a.array.dtype() != b.array.dtype())
    throw UsageError(std::string("A and B must have the same dtype: A '") + o.a + "' is " +
                     io::dtype_name(a.array.dtype()) + ", B '" + o.b + "' is " + io::dtype_name(b.array.dtype()));
  if (a.array.shape != b.array.shape)
    throw UsageError("A and B must have the same shape: A '" + o.a + "' is " + io::shape_string(a.array.shape) +
                     ", B '" + o.b + "' is " + io::shape_string(b.array.shape));
  std::size_t elements = 1;
  for (int e : extents) elements *= std::size_t(e);
  if (elements > (std::size_t(1) << 30)) throw UsageError("the inputs have more than 2^30 elements");
  if (opts.padding == Padding::Valid) {
    for (std::size_t i = 2; i < extents.size(); ++i)
      if (extents[i] < opts.window_size)
        throw UsageError("the inputs of shape " + io::shape_string(a.array.shape) + " are smaller than the " +
                         std::to_string(opts.window_size) + "-pixel window along an axis; valid padding needs every " +
                         (o.dims == 2 ? "H and W" : "D, H and W") + " >= --window (use a smaller --window or --padding same)");
  }
  check_finite("A", o.a, a.array);
  check_finite("B", o.b, b.array);

  const std::vector<int> map_ext = map_extents(extents, opts);
  const std::vector<std::size_t> map_shape = with_shape_of(a.array.shape, extents, map_ext);
  const bool map_png = !o.map.empty() && lower_extension(o.map) == ".png";
  if (map_png) {
    const auto size = rendered_size(std::vector<std::size_t>(map_ext.begin(), map_ext.end()));
    if (size[0] > (1u << 20) || size[1] > (1u << 20) || size[0] * size[1] > (1u << 28))
      throw UsageError("--map: the map is too large to render as PNG; write it as .npy");
  }

  // 3. The computation.
  ComputeRequest request;
  request.a = &a.array;
  request.b = &b.array;
  request.extents = extents;
  request.options = opts;
  request.want_map = !o.map.empty();
  request.want_per_image = o.per_image;
  request.want_grad_a = !o.grad_a.empty();
  request.want_grad_b = !o.grad_b.empty();
  request.repeat = o.repeat_given ? o.repeat : 0;
  ComputeResult result = compute(request);

  // 4. The files, all or nothing.
  std::vector<io::OutputFile> files;
  if (result.map) {
    if (map_png) {
      const std::string description = "SSIM map of '" + o.a + "' and '" + o.b + "' (map shape " +
                                      io::shape_string(map_shape) + "). " + colormap_legend();
      files.push_back({o.map, io::encode_png(render_map(*result.map), {{"Title", "kssim SSIM map"},
                                                                       {"Description", description},
                                                                       {"Software", "kssim " KSSIM_VERSION}})});
    } else {
      files.push_back({o.map, io::encode_npy(reshaped(std::move(*result.map), map_shape))});
    }
  }
  if (result.grad_a) files.push_back({o.grad_a, io::encode_npy(reshaped(std::move(*result.grad_a), a.array.shape))});
  if (result.grad_b) files.push_back({o.grad_b, io::encode_npy(reshaped(std::move(*result.grad_b), a.array.shape))});
  io::write_files(files);

  // 5. stdout.
  if (!o.json) {
    std::string out = format_double(result.mean) + "\n";
    for (std::size_t n = 0; n < result.per_image.size(); ++n)
      out += "image " + std::to_string(n) + ": " + format_double(result.per_image[n]) + "\n";
    if (result.timing)
      out += "timing: repeat=" + std::to_string(result.timing->repeat) +
             " median_s=" + format_double(result.timing->median_s) + " min_s=" + format_double(result.timing->min_s) +
             "\n";
    return out;
  }
  nlohmann::ordered_json j;
  j["ssim"] = result.mean;
  j["shape"] = a.array.shape;
  j["dtype"] = io::dtype_name(a.array.dtype());
  j["dims"] = o.dims;
  j["padding"] = o.padding;
  j["window"] = opts.window_size;
  j["sigma"] = opts.sigma;
  j["k1"] = opts.k1;
  j["k2"] = opts.k2;
  j["data_range"] = opts.data_range;
  j["map_shape"] = map_shape;
  j["backend"] = result.backend;
  j["inputs"] = {{"a", {{"path", o.a}, {"format", io::format_name(a.format)}}},
                 {"b", {{"path", o.b}, {"format", io::format_name(b.format)}}}};
  nlohmann::ordered_json outputs = nlohmann::ordered_json::object();
  if (!o.map.empty()) outputs["map"] = o.map;
  if (!o.grad_a.empty()) outputs["grad_a"] = o.grad_a;
  if (!o.grad_b.empty()) outputs["grad_b"] = o.grad_b;
  j["outputs"] = outputs;
  if (o.per_image) j["per_image"] = result.per_image;
  if (result.timing)
    j["timing"] = {{"repeat", result.timing->repeat},
                   {"median_s", result.timing->median_s},
                   {"min_s", result.timing->min_s}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kssim::cli
