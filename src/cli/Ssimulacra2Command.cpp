#include "cli/Ssimulacra2Command.hpp"

#include "cli/UsageError.hpp"
#include "io/File.hpp"
#include "io/Image.hpp"
#include "io/PngImage.hpp"
#include "io/PnmImage.hpp"

#include <kssim/Ssimulacra2.hpp>

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

namespace kssim::cli {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using HostImages = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;
using DeviceImages = Kokkos::View<float****, Kokkos::LayoutRight, Mem>;

// Distorted images compared per batch: the workspace grows with the batch (Ssimulacra2.hpp, 131 MB per
// 1080p image). GPUs take four at a time (more parallel work for small images); hosts one, which is as
// fast per image and keeps the workspace in the caches and out of the page-fault handler.
constexpr int max_batch = impl::is_gpu_space_v<Exec> ? 4 : 1;

io::Image load_image(const std::string& path) {
  const std::vector<std::byte> bytes = io::read_file(path);
  if (io::looks_like_png(bytes)) return io::decode_png(bytes);
  if (io::looks_like_pnm(bytes)) return io::decode_pnm(bytes);
  throw UsageError(path + ": not a PNG, PGM or PPM image (ssimulacra2 compares images)");
}

// The image's colour as sRGB values in [0, 1], grey expanded to RGB; an alpha channel is composited on a
// grey background `bg` in sRGB (what libjxl's ssimulacra2 tool does). Writes image n of `out`.
void to_rgb(const io::Image& im, float bg, const HostImages& out, int n) {
  const int ch = im.channels, colors = im.color_channels();
  // Samples times a float reciprocal, as libjxl's image import does (a division in double rounds a few
  // codes differently, by one ulp).
  const float scale = 1.0f / float(im.max_value);
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const std::size_t i = (std::size_t(y) * im.width + x) * ch;
      const float a = im.has_alpha() ? float(im.samples[i + ch - 1]) * scale : 1.0f;
      for (int c = 0; c < 3; ++c) {
        float v = float(im.samples[i + (colors == 3 ? c : 0)]) * scale;
        if (im.has_alpha()) v = std::fma(a, v, 0.0f) + std::fma(1.0f - a, bg, 0.0f);  // two roundings, no FMA
        out(n, c, y, x) = v;
      }
    }
}

struct Loaded {
  std::string path;
  io::Image image;
};

}  // namespace

std::string run_ssimulacra2(const Ssimulacra2CliOptions& o) {
  if (o.distorted.empty()) throw UsageError("ssimulacra2 needs a reference and at least one distorted image");
  const Loaded ref{o.reference, load_image(o.reference)};
  std::vector<Loaded> dist;
  for (const auto& p : o.distorted) {
    dist.push_back({p, load_image(p)});
    const auto& d = dist.back().image;
    if (d.width != ref.image.width || d.height != ref.image.height)
      throw UsageError(p + " is " + std::to_string(d.width) + " x " + std::to_string(d.height) + ", the reference " +
                       o.reference + " is " + std::to_string(ref.image.width) + " x " +
                       std::to_string(ref.image.height));
  }
  const int h = ref.image.height, w = ref.image.width;
  if (h < impl::s2::min_extent || w < impl::s2::min_extent)
    throw UsageError(o.reference + " is " + std::to_string(w) + " x " + std::to_string(h) +
                     ": ssimulacra2 needs at least " + std::to_string(impl::s2::min_extent) + " x " +
                     std::to_string(impl::s2::min_extent) + " pixels (its sixth scale, 1:32, must be 8 x 8)");

  // A reference with alpha is scored on a dark and a bright background and the worse score kept; otherwise
  // distorted images with alpha are composited on mid grey (both as libjxl's tool does).
  const bool ref_alpha = ref.image.has_alpha();
  const std::vector<float> backgrounds = ref_alpha ? std::vector<float>{0.1f, 0.9f} : std::vector<float>{0.5f};
  std::vector<double> scores(dist.size(), std::numeric_limits<double>::infinity());
  std::string backend;
  {
    Kokkos::ScopeGuard kokkos(Kokkos::InitializationSettings().set_disable_warnings(true));
    backend = Exec::name();
    Exec exec;
    for (float bg : backgrounds) {
      HostImages href(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::s2_ref"), 1, 3, h, w);
      to_rgb(ref.image, bg, href, 0);
      DeviceImages dref = Kokkos::create_mirror_view_and_copy(Mem(), href);
      Ssimulacra2Options opts;
      opts.check_values = false;  // decoded PNG/PNM samples are in [0, 1] by construction
      Ssimulacra2Reference<Exec> cached(exec, dref, 0, opts);
      for (std::size_t first = 0; first < dist.size(); first += max_batch) {
        const int count = int(std::min<std::size_t>(max_batch, dist.size() - first));
        HostImages hd(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::s2_dist"), count, 3, h, w);
        for (int n = 0; n < count; ++n) to_rgb(dist[first + n].image, bg, hd, n);
        DeviceImages dd = Kokkos::create_mirror_view_and_copy(Mem(), hd);
        Kokkos::View<double*, Mem> s("kssim_cli::s2_scores", count);
        cached.compare(exec, dd, s);
        auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
        for (int n = 0; n < count; ++n) scores[first + n] = std::min(scores[first + n], hs(n));
      }
    }
  }

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
