// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Compare.hpp"

#include "cli/ChannelAxis.hpp"
#include "cli/Compute.hpp"
#include "cli/Inputs.hpp"
#include "cli/MapOutput.hpp"
#include "cli/Mask.hpp"
#include "cli/NumberText.hpp"
#include "cli/Report.hpp"
#include "cli/UsageError.hpp"
#include "io/Error.hpp"
#include "io/File.hpp"
#include "io/Load.hpp"
#include "io/Npy.hpp"

#include <kssim/MSSSIMOptions.hpp>
#include <kssim/Options.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

namespace kssim::cli {
namespace {

namespace fs = std::filesystem;

// kssim::validate's message in the tool's option names (the rules live in C++, include/kssim/Options.hpp).
std::string in_flag_names(std::string message) {
  static const std::pair<const char*, const char*> names[] = {
      {"window_size", "--window"}, {"data_range", "--data-range"}, {"sigma", "--sigma"}, {"k1", "--k1"}, {"k2", "--k2"}};
  for (const auto& [field, flag] : names) {
    const std::string f(field);
    for (std::size_t at = message.find(f); at != std::string::npos; at = message.find(f, at + 1)) {
      const bool word_start = at == 0 || !(std::isalnum((unsigned char)message[at - 1]) || message[at - 1] == '_' ||
                                           message[at - 1] == '-');
      const std::size_t end = at + f.size();
      const bool word_end = end == message.size() || !(std::isalnum((unsigned char)message[end]) || message[end] == '_');
      if (word_start && word_end) message.replace(at, f.size(), flag);
    }
  }
  return message;
}

// --padding's names, as kssim::to_string(Padding) spells them.
Padding padding_named(const std::string& name) {
  for (Padding p : {Padding::Valid, Padding::Same, Padding::Reflect, Padding::Replicate})
    if (name == to_string(p)) return p;
  throw UsageError("unknown --padding '" + name + "' (expected valid, same, reflect or replicate)");
}

Options validated_options(const CompareOptions& o) {
  Options opts;
  opts.padding = padding_named(o.padding);
  if (o.dims != 2 && o.dims != 3) throw UsageError("--dims must be 2 or 3, got " + std::to_string(o.dims));
  if (!o.channel_axis.empty() && o.channel_axis != "first" && o.channel_axis != "last")
    throw UsageError("unknown --channel-axis '" + o.channel_axis + "' (expected first or last)");
  if (o.map_channels != "all" && o.map_channels != "mean")
    throw UsageError("unknown --map-channels '" + o.map_channels + "' (expected all or mean)");
  if (o.threshold && !std::isfinite(*o.threshold))
    throw UsageError("--threshold must be a finite number, got " + number_text(*o.threshold));
  if (o.repeat_given && (o.repeat < 1 || o.repeat > 1000000))
    throw UsageError("--repeat must be from 1 to 1000000, got " + std::to_string(o.repeat));
  if (o.metric != "ssim" && o.metric != "ms-ssim")
    throw UsageError("unknown --metric '" + o.metric + "' (expected ssim or ms-ssim)");
  if (!o.mask_mode.empty() && o.mask_mode != "weights" && o.mask_mode != "normalized")
    throw UsageError("unknown --mask-mode '" + o.mask_mode + "' (expected weights or normalized)");
  if (!o.mask_mode.empty() && o.mask.empty()) throw UsageError("--mask-mode needs --mask FILE");
  // kssim::MaskedSSIM refuses this pair too, but only once the inputs are decoded.
  if (o.mask_mode == "normalized" && (opts.padding == Padding::Reflect || opts.padding == Padding::Replicate))
    throw UsageError("--mask-mode normalized takes --padding valid or same, not " + o.padding);
  if (o.metric == "ms-ssim") {
    if (!o.mask.empty()) throw UsageError("--mask is not available with --metric ms-ssim (masked MS-SSIM is not implemented)");
    if (opts.padding != Padding::Valid)
      throw UsageError("--metric ms-ssim uses valid windows at every scale: --padding " + o.padding +
                       " is not available");
    if (!o.map.empty())
      throw UsageError("--metric ms-ssim has no map (it multiplies the means of five scales): --map is not available");
  }
  opts.window_size = o.window;
  opts.sigma = o.sigma;
  opts.k1 = o.k1;
  opts.k2 = o.k2;
  opts.data_range = o.data_range;
  opts.max_workspace_bytes = o.max_workspace;
  try {
    validate(opts);
  } catch (const std::invalid_argument& e) {
    throw UsageError(in_flag_names(e.what()));
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

// Outputs: valid paths, distinct, and none of them the same file as an input (compared as files, so that
// links and other spellings of the path are caught): writing it would destroy the input.
void check_outputs(const CompareOptions& o) {
  std::set<fs::path> seen;
  auto add = [&](const std::string& option, const std::string& path, std::initializer_list<const char*> exts) {
    if (path.empty()) return;
    check_output_path(option, path, exts);
    std::error_code ec;
    fs::path key = fs::weakly_canonical(fs::path(path), ec);
    if (ec) key = fs::absolute(fs::path(path), ec).lexically_normal();
    if (!seen.insert(key).second) throw UsageError(option + " '" + path + "' names a file already used for another output");
    std::vector<std::string> inputs = o.b;
    inputs.insert(inputs.begin(), o.a);
    if (!o.mask.empty()) inputs.push_back(o.mask);
    for (const std::string& input : inputs) {
      std::error_code eq;
      if (input != io::stdin_path.string() && fs::equivalent(fs::path(path), fs::path(input), eq) && !eq)
        throw UsageError(option + " '" + path + "' is the input '" + input + "': writing it would overwrite the input");
    }
  };
  add("--map", o.map, {".npy", ".png"});
  add("--grad-a", o.grad_a, {".npy"});
  add("--grad-b", o.grad_b, {".npy"});
  if (o.map_legend && (o.map.empty() || lower_extension(o.map) != ".png"))
    throw UsageError("--map-legend draws a colour bar into a PNG map: it needs --map FILE.png");
}

// Same dtype, and same shape; an image (always (1, C, H, W)) may also meet an array of the same extents
// without the leading unit axis, e.g. a PNG and an (H, W, 3) array read with --channel-axis last.
void check_same_kind(const Input& a, const Input& b, int dims) {
  if (a.info.dtype != b.info.dtype || a.info.widened != b.info.widened)
    throw UsageError("A and B must have the same dtype: " + a.label + " is " + a.info.stored_dtype_name() + ", " +
                     b.label + " is " + b.info.stored_dtype_name());
  const bool image_involved = a.info.is_image() || b.info.is_image();
  if (a.shape != b.shape && !(image_involved && normalized_extents(a, dims) == normalized_extents(b, dims)))
    throw UsageError("A and B must have the same shape: " + a.label + " is " + io::shape_string(a.info.shape) + ", " +
                     b.label + " is " + io::shape_string(b.info.shape) +
                     (a.info.shape != a.shape || b.info.shape != b.shape ? " (channel-first: " +
                          io::shape_string(a.shape) + " and " + io::shape_string(b.shape) + ")" : std::string()));
}

void check_size(const std::vector<int>& extents, const Input& a, const Options& opts, int dims) {
  // No limit on the elements: SSIM splits problems larger than one call into slabs (the library's Slabs.hpp);
  // MS-SSIM and masks, which do not, refuse them with the library's error.
  if (opts.padding == Padding::Valid) {
    for (std::size_t i = 2; i < extents.size(); ++i)
      if (extents[i] < opts.window_size)
        throw UsageError("the inputs of shape " + io::shape_string(a.info.shape) + " are smaller than the " +
                         std::to_string(opts.window_size) + "-pixel window along an axis; valid padding needs every " +
                         (dims == 2 ? "H and W" : "D, H and W") + " >= --window (use a smaller --window or --padding same)" +
                         (a.axis == ChannelAxis::First && !a.info.is_image() && a.info.shape.size() > std::size_t(dims)
                              ? "; if the channels are the last axis, give --channel-axis last"
                              : ""));
  }
  // The library's rule (a mirror image reaches window_size / 2 pixels), checked here before any decoding.
  if (opts.padding == Padding::Reflect) {
    for (std::size_t i = 2; i < extents.size(); ++i)
      if (extents[i] <= opts.window_size / 2)
        throw UsageError("the inputs of shape " + io::shape_string(a.info.shape) + " are too small for --padding "
                         "reflect with a " + std::to_string(opts.window_size) + "-pixel window: every " +
                         (dims == 2 ? "H and W" : "D, H and W") + " must be > --window / 2 = " +
                         std::to_string(opts.window_size / 2) + " (the mirror image reaches that far; use a smaller "
                         "--window or --padding replicate)");
  }
}

// The shape `extents` had before the leading unit axes were added (the input's own rank).
std::vector<std::size_t> with_rank_of(const std::vector<std::size_t>& input_shape, const std::vector<int>& extents) {
  std::vector<std::size_t> s(input_shape.size());
  const std::size_t offset = extents.size() - input_shape.size();
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::size_t(extents[i + offset]);
  return s;
}

// The shape of an array of kssim's extents `ext` in the layout of input `like` (its rank and channel axis).
std::vector<std::size_t> layout_shape(const std::vector<int>& ext, const Input& like, int dims) {
  std::vector<std::size_t> s = with_rank_of(like.shape, ext);
  if (like.axis == ChannelAxis::Last && s.size() >= std::size_t(dims) + 1) {
    const std::size_t first = s.size() - std::size_t(dims) - 1;
    std::rotate(s.begin() + std::ptrdiff_t(first), s.begin() + std::ptrdiff_t(first) + 1, s.end());
  }
  return s;
}

// An array of kssim's extents given back in the layout of input `like`.
io::Array in_layout_of(io::Array array, const Input& like, int dims) {
  array.shape = with_rank_of(like.shape, std::vector<int>(array.shape.begin(), array.shape.end()));
  return channels_last(std::move(array), dims, like.axis);
}

// MS-SSIM's scales: every spatial extent must exceed (window - 1) * 2^4 (pytorch-msssim's rule).
void check_ms_ssim_size(const std::vector<int>& extents, const Input& a, const Options& opts) {
  MSSSIMOptions ms;
  ms.ssim = opts;
  for (std::size_t i = 2; i < extents.size(); ++i)
    if (extents[i] < ms.min_extent())
      throw UsageError("--metric ms-ssim needs every spatial extent > " + std::to_string(ms.min_extent() - 1) +
                       " ((window - 1) * 2^4 for its five scales), but the inputs have shape " +
                       io::shape_string(a.info.shape) + " (use a smaller --window, or --metric ssim)");
}

std::string not_finite_message(const Options& opts) {
  if (opts.k1 == 0 || opts.k2 == 0)
    return "the SSIM is NaN although both inputs are finite: with --k1 0 or --k2 0 a window in which both inputs "
           "are flat divides 0 by 0; use positive --k1 and --k2";
  return "the SSIM is not finite although both inputs are finite: the values are too large for the dtype (their "
         "squares overflow); rescale them or use float64";
}

}  // namespace

CompareOutcome run_compare(const CompareOptions& o) {
  // 1. Everything that does not need the inputs.
  const Options opts = validated_options(o);
  if (o.b.empty()) throw UsageError("give at least one input B to compare with A");
  const bool several = o.b.size() > 1;
  if (several && (!o.map.empty() || !o.grad_a.empty() || !o.grad_b.empty()))
    throw UsageError("--map, --grad-a and --grad-b write one pair's results: give a single B with them");
  std::size_t from_stdin = std::count(o.b.begin(), o.b.end(), io::stdin_path.string()) + (o.a == io::stdin_path.string()) +
                           (o.mask == io::stdin_path.string());
  if (from_stdin > 1) throw UsageError("only one input can be read from the standard input ('-')");
  check_outputs(o);

  // 2. Headers only: formats, dtypes, shapes and channel axes of every input before any is decoded.
  Input a = probe_input("A", o.a, o.dims, o.channel_axis, true);
  std::vector<Input> bs;
  for (std::size_t k = 0; k < o.b.size(); ++k)
    bs.push_back(probe_input(several ? "B" + std::to_string(k + 1) : "B", o.b[k], o.dims, o.channel_axis, !several));
  const std::vector<int> extents = normalized_extents(a, o.dims);
  for (const Input& b : bs) {
    normalized_extents(b, o.dims);
    check_same_kind(a, b, o.dims);
  }
  check_size(extents, a, opts, o.dims);
  if (o.metric == "ms-ssim") check_ms_ssim_size(extents, a, opts);
  std::optional<Input> mask;
  if (!o.mask.empty()) mask = probe_mask(o.mask, o.dims, o.channel_axis, extents);
  const std::vector<int> map_ext = map_extents(extents, opts);
  const bool map_png = !o.map.empty() && lower_extension(o.map) == ".png";
  const bool map_mean = o.map_channels == "mean";
  if (map_png) check_renderable(map_ext, map_mean, o.map_legend);
  std::vector<int> map_ext_out = map_ext;
  if (map_mean) map_ext_out[1] = 1;
  const std::vector<std::size_t> map_shape = layout_shape(map_ext_out, a, o.dims);  // in A's layout

  // 3. A, decoded once; then each B in turn, compared with it. Nothing is printed until every pair succeeded,
  // so a bad B keeps the error contract (nothing on stdout).
  CompareOutcome outcome;
  const io::LoadedArray a_loaded = load_input(a, o.dims);
  if (auto w = data_range_warning(a, a_loaded, opts.data_range)) outcome.warnings.push_back(*w);
  std::optional<io::Array> mask_array;
  if (mask) mask_array = load_mask(*mask, o.dims, extents, a.info.dtype);
  ComputeSession session(opts);
  std::vector<io::OutputFile> files;
  std::string text;
  for (Input& b : bs) {
    const io::LoadedArray b_loaded = load_input(b, o.dims);
    if (auto w = data_range_warning(b, b_loaded, opts.data_range)) outcome.warnings.push_back(*w);
    ComputeRequest request;
    request.a = &a_loaded.array;
    request.b = &b_loaded.array;
    request.extents = extents;
    request.metric = o.metric == "ms-ssim" ? Metric::MsSsim : Metric::Ssim;
    request.mask = mask_array ? &*mask_array : nullptr;
    request.mask_mode = o.mask_mode == "normalized" ? MaskMode::Normalized : MaskMode::Weights;
    request.want_map = !o.map.empty();
    request.want_per_image = o.per_image;
    request.want_per_channel = o.per_channel;
    request.want_grad_a = !o.grad_a.empty();
    request.want_grad_b = !o.grad_b.empty();
    request.repeat = o.repeat_given ? o.repeat : 0;
    ComputeResult r = session.compute(request);
    if (!std::isfinite(r.mean))
      throw UsageError(mask ? "the masked SSIM is undefined: the mask is 0 at the centre of every window (with valid "
                              "padding the mask's outer (window - 1) / 2 pixels weigh nothing)"
                            : not_finite_message(opts));
    const bool below = o.threshold && r.mean < *o.threshold;
    if (below) outcome.status = 1;

    // The files of a single pair, in A's layout.
    if (r.map) {
      io::Array map = map_mean ? mean_over_channels(*r.map) : std::move(*r.map);
      if (map_png) {
        const std::string description = "SSIM map of '" + o.a + "' and '" + b.path + "' (map shape " +
                                        io::shape_string(map_shape) + "). " + map_description(map_mean, opts);
        files.push_back({o.map, encode_map_png(map, description, o.map_legend)});
      } else {
        files.push_back({o.map, io::encode_npy(in_layout_of(std::move(map), a, o.dims))});
      }
    }
    if (r.grad_a) files.push_back({o.grad_a, io::encode_npy(in_layout_of(std::move(*r.grad_a), a, o.dims))});
    if (r.grad_b) files.push_back({o.grad_b, io::encode_npy(in_layout_of(std::move(*r.grad_b), b, o.dims))});

    const PairReport report{a, b, mask ? &*mask : nullptr, r, extents, map_shape, below, several};
    text += o.json ? json_report(report, o, opts) : plain_report(report);
  }

  // 4. The files, all or nothing; then stdout.
  io::write_files(files);
  outcome.out = std::move(text);
  return outcome;
}

}  // namespace kssim::cli
