// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Ssimulacra2Command.hpp"

#include "cli/UsageError.hpp"
#include "io/File.hpp"
#include "io/Image.hpp"
#include "io/JpegImage.hpp"
#include "io/Pieces.hpp"
#include "io/PngImage.hpp"
#include "io/PnmImage.hpp"
#include "io/TiffImage.hpp"
#include "io/WebpImage.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <sstream>
#include <thread>
#include <variant>

namespace kssim::cli {
namespace {

// The integer (display-referred) formats `kssim compare` reads; SSIMULACRA2 is defined on sRGB images.
io::Image load_image(const std::string& path) {
  const std::vector<std::byte> bytes = io::read_file(path);
  if (io::looks_like_png(bytes)) return io::decode_png(bytes);
  if (io::looks_like_pnm(bytes)) return io::decode_pnm(bytes);
  if (io::looks_like_jpeg(bytes)) return io::decode_jpeg(bytes);
  if (io::looks_like_webp(bytes)) return io::decode_webp(bytes);
  if (io::looks_like_tiff(bytes)) {
    auto decoded = io::decode_tiff(bytes);
    if (auto* image = std::get_if<io::Image>(&decoded)) return std::move(*image);
    throw UsageError(path + ": a floating-point TIFF; ssimulacra2 compares 8- or 16-bit sRGB images");
  }
  throw UsageError(path + ": not a PNG, PGM/PPM, JPEG, WebP or integer TIFF image (ssimulacra2 compares images)");
}

// The image's colour as sRGB planes (3, h, w) in [0, 1], grey expanded to RGB; an alpha channel is
// composited on a grey background `bg` in sRGB (what libjxl's ssimulacra2 tool does). Rows are shared among
// the cores, and each row's loops have no per-sample branches (this ran single-threaded at 15 ms of CPU
// per 1080p image, while the kernels' threads waited).
void to_rgb(const io::Image& im, float bg, float* out) {
  const std::size_t ch = std::size_t(im.channels), colors = std::size_t(im.color_channels());
  const std::size_t width = std::size_t(im.width), plane = width * std::size_t(im.height);
  // Samples times a float reciprocal, as libjxl's image import does (a division in double rounds a few
  // codes differently, by one ulp).
  const float scale = 1.0f / float(im.max_value);
  const bool alpha = im.has_alpha();
  auto rows = [&](std::size_t, std::size_t y0, std::size_t y1) {
    for (std::size_t y = y0; y < y1; ++y) {
      const std::uint16_t* row = im.samples.data() + y * width * ch;
      for (std::size_t c = 0; c < 3; ++c) {
        const std::uint16_t* src = row + (colors == 3 ? c : 0);
        float* dst = out + c * plane + y * width;
        if (!alpha) {
          for (std::size_t x = 0; x < width; ++x) dst[x] = float(src[x * ch]) * scale;
          continue;
        }
        const std::uint16_t* a = row + ch - 1;
        for (std::size_t x = 0; x < width; ++x) {
          const float av = float(a[x * ch]) * scale, v = float(src[x * ch]) * scale;
          dst[x] = std::fma(av, v, 0.0f) + std::fma(1.0f - av, bg, 0.0f);  // two roundings, no FMA
        }
      }
    }
  };
  const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  io::for_each_piece(std::size_t(im.height), 4 * threads, rows, threads);
}

struct Loaded {
  std::string path;
  io::Image image;
};

}  // namespace

std::string run_ssimulacra2(const Ssimulacra2CliOptions& o) {
  if (o.distorted.empty()) throw UsageError("ssimulacra2 needs a reference and at least one distorted image");
  // PNG decoding (libpng, one thread per file) is a large share of a CPU comparison's time: the files are
  // decoded on as many threads as the machine has, and errors reported for the first bad file in argument
  // order, as a sequential loop would.
  std::vector<std::string> paths{o.reference};
  paths.insert(paths.end(), o.distorted.begin(), o.distorted.end());
  std::vector<io::Image> images(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  {
    const std::size_t workers = std::min<std::size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < workers; ++t)
      pool.emplace_back([&] {
        for (std::size_t i; (i = next++) < paths.size();) {
          try {
            images[i] = load_image(paths[i]);
          } catch (...) {
            errors[i] = std::current_exception();
          }
        }
      });
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  const Loaded ref{o.reference, std::move(images[0])};
  std::vector<Loaded> dist;
  for (std::size_t i = 1; i < paths.size(); ++i) {
    const std::string& p = paths[i];
    dist.push_back({p, std::move(images[i])});
    const auto& d = dist.back().image;
    if (d.width != ref.image.width || d.height != ref.image.height)
      throw UsageError(p + " is " + std::to_string(d.width) + " x " + std::to_string(d.height) + ", the reference " +
                       o.reference + " is " + std::to_string(ref.image.width) + " x " +
                       std::to_string(ref.image.height));
  }
  const int h = ref.image.height, w = ref.image.width;
  if (h < ssimulacra2_min_extent || w < ssimulacra2_min_extent)
    throw UsageError(o.reference + " is " + std::to_string(w) + " x " + std::to_string(h) +
                     ": ssimulacra2 needs at least " + std::to_string(ssimulacra2_min_extent) + " x " +
                     std::to_string(ssimulacra2_min_extent) + " pixels (as libjxl's tool)");

  // A reference with alpha is scored on a dark and a bright background and the worse score kept; otherwise
  // distorted images with alpha are composited on mid grey (both as libjxl's tool does).
  const bool ref_alpha = ref.image.has_alpha();
  const std::vector<float> backgrounds = ref_alpha ? std::vector<float>{0.1f, 0.9f} : std::vector<float>{0.5f};
  Ssimulacra2Request request;
  request.h = h;
  request.w = w;
  request.backgrounds = backgrounds;
  request.count = dist.size();
  request.reference = [&](float bg, float* rgb) { to_rgb(ref.image, bg, rgb); };
  request.distorted = [&](std::size_t i, float bg, float* rgb) { to_rgb(dist[i].image, bg, rgb); };
  const Ssimulacra2Result result = compute_ssimulacra2(request);
  const std::vector<double>& scores = result.scores;
  const std::string& backend = result.backend;

  std::ostringstream out;
  for (std::size_t i = 0; i < dist.size(); ++i) {
    if (o.json) {
      nlohmann::json j;
      j["reference"] = o.reference;
      j["distorted"] = dist[i].path;
      j["ssimulacra2"] = scores[i];
      j["width"] = w;
      j["height"] = h;
      j["backend"] = backend;
      out << j.dump() << "\n";
    } else {
      char line[64];
      std::snprintf(line, sizeof line, "%.8f\n", scores[i]);
      out << line;
    }
  }
  return out.str();
}

}  // namespace kssim::cli
