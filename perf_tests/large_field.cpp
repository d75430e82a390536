// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim_large_field: SSIM and both gradients of one large generated volume (issue 19: past 2^30 voxels,
// within a workspace budget), with the peak resident memory, the pieces the problem ran in, and a float64
// check of sample boxes.
//
//   kssim_large_field --dims 1024,1024,1024 [--budget BYTES] [--padding valid|same] [--samples K] [--map]
//                     [--masked] [--normalized]
//
// --masked: masked SSIM with map weights (MaskMode::Weights) of a generated mask (a fifth of it 0, the rest
// uniform in (0.2, 1)) instead, checked against the masked float64 reference (unit_tests/
// ReferenceMaskedSSIM.hpp), and then plain SSIM's ssim_grad of the same images timed as well, for the cost of
// the mask in pieces (masked_over_ssim). --normalized: the same with normalized statistics
// (MaskMode::Normalized).
//
// The images are generated on the device from a counter-based hash of each voxel's index (no host copy of
// the field), so the check regenerates any box on the host. The check: boxes of 3 (w - 1) voxels a side,
// placed across the pieces' borders and elsewhere inside the field; the float64 reference (unit_tests/
// ReferenceSSIM.hpp) of a box with valid padding gives the full field's gradient at the box's inner
// (w - 1)^3 voxels (every map pixel whose window covers them lies in the box), scaled by the ratio of the
// map sizes, and with --map (a second pass: map instead of gradients) the full field's map at the box's map
// pixels. Prints one JSON line and a short table.
#include "../unit_tests/ReferenceMaskedSSIM.hpp"
#include "../unit_tests/ReferenceSSIM.hpp"

#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

// kssim_large_field_host (KSSIM_LARGE_FIELD_HOST): the host backend of the same build.
#if defined(KSSIM_LARGE_FIELD_HOST)
using Exec = Kokkos::DefaultHostExecutionSpace;
#else
using Exec = Kokkos::DefaultExecutionSpace;
#endif
using Mem = Exec::memory_space;
using Field = Kokkos::View<float*****, Kokkos::LayoutRight, Mem>;

KOKKOS_INLINE_FUNCTION std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
// Image 1: uniform in [0, 1); image 2: image 1 plus noise of amplitude 0.2, so SSIM is far from 0 and 1.
KOKKOS_INLINE_FUNCTION float voxel(std::uint64_t seed, std::uint64_t i, int which) {
  const auto u = [](std::uint64_t h) { return float(double(h >> 11) * 0x1p-53); };
  const float x = u(mix(seed * 0x9e3779b97f4a7c15ull + 2 * i));
  return which == 0 ? x : x + 0.2f * (u(mix(seed * 0x9e3779b97f4a7c15ull + 2 * i + 1)) - 0.5f);
}

// The mask of --masked: 0 for a fifth of the voxels, else uniform in (0.2, 1).
KOKKOS_INLINE_FUNCTION float mask_voxel(std::uint64_t seed, std::uint64_t i) {
  const float u = float(double(mix(~seed * 0x9e3779b97f4a7c15ull + i) >> 11) * 0x1p-53);
  return u < 0.2f ? 0.0f : u;
}

// which: 0 and 1 the images, 2 the mask.
void fill(const Field& f, std::uint64_t seed, int which) {
  float* p = f.data();
  const std::int64_t n = std::int64_t(f.size());
  Kokkos::parallel_for("fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
                       KOKKOS_LAMBDA(std::int64_t i) {
                         p[i] = which == 2 ? mask_voxel(seed, std::uint64_t(i)) : voxel(seed, std::uint64_t(i), which);
                       });
}

// The sum of the map weights over the whole map: the mask at each map voxel's window centre (`shift` voxels in
// along each axis), in double.
double weight_total(std::uint64_t seed, int od, int oh, int ow, int H, int W, int shift) {
  double total = 0;
  const std::int64_t n = std::int64_t(od) * oh * ow;
  Kokkos::parallel_reduce(
      "weight_total", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
      KOKKOS_LAMBDA(std::int64_t i, double& sum) {
        const std::int64_t d = i / (std::int64_t(oh) * ow) + shift, h = i / ow % oh + shift, w = i % ow + shift;
        sum += double(mask_voxel(seed, std::uint64_t((d * H + h) * W + w)));
      },
      total);
  return total;
}

// A box of a device field, copied to the host (a gather kernel on raw pointers, then a contiguous copy).
std::vector<double> box_of(const Field& f, const int (&o)[3], int b) {
  Kokkos::View<float*, Mem> dev("box", std::size_t(b) * b * b);
  const float* src = f.data();
  float* dst = dev.data();
  const std::int64_t sd = f.stride(2), sh = f.stride(3);
  const int o0 = o[0], o1 = o[1], o2 = o[2];
  Kokkos::parallel_for("gather", Kokkos::RangePolicy<Exec>(0, b * b * b), KOKKOS_LAMBDA(int i) {
    const int d = i / (b * b), h = i / b % b, w = i % b;
    dst[i] = src[std::int64_t(o0 + d) * sd + std::int64_t(o1 + h) * sh + o2 + w];
  });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev);
  return std::vector<double>(host.data(), host.data() + host.size());
}

double peak_rss_gb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024 / 1e9;
}

std::vector<int> parse_dims(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p) ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<int> dims{256, 256, 256};
  std::size_t budget = 0;
  bool same = false, check_map = false, masked = false, normalized = false;
  int samples = 6, repeat = 1;
  std::uint64_t seed = 19;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "missing value\n"), std::exit(2), ""); };
    if (a == "--dims") dims = parse_dims(next());
    else if (a == "--budget") budget = std::strtoull(next(), nullptr, 10);
    else if (a == "--padding") same = std::string(next()) == "same";
    else if (a == "--samples") samples = std::atoi(next());
    else if (a == "--seed") seed = std::strtoull(next(), nullptr, 10);
    else if (a == "--map") check_map = true;
    else if (a == "--masked") masked = true;
    else if (a == "--normalized") masked = normalized = true;
    else if (a == "--repeat") repeat = std::max(1, std::atoi(next()));
    else {
      std::fprintf(stderr, "usage: kssim_large_field --dims D,H,W [--budget BYTES] [--padding valid|same] "
                           "[--samples K] [--seed S] [--map] [--repeat R] [--masked] [--normalized]\n");
      return 2;
    }
  }
  if (dims.size() != 3) return std::fprintf(stderr, "--dims takes D,H,W\n"), 2;
  const int D = dims[0], H = dims[1], W = dims[2];
  kssim::Options opts;
  opts.padding = same ? kssim::Padding::Same : kssim::Padding::Valid;
  opts.max_workspace_bytes = budget;
  const int w = opts.window_size, b = 3 * (w - 1), inner = w - 1;
  if (D < b + 2 * w || H < b + 2 * w || W < b + 2 * w) return std::fprintf(stderr, "each extent must be >= %d\n", b + 2 * w), 2;
  Exec exec;
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const auto seconds = [](auto a, auto z) { return std::chrono::duration<double>(z - a).count(); };

  Field x(Kokkos::view_alloc("x", Kokkos::WithoutInitializing), 1, 1, D, H, W);
  Field y(Kokkos::view_alloc("y", Kokkos::WithoutInitializing), 1, 1, D, H, W);
  fill(x, seed, 0);
  fill(y, seed, 1);
  Field mask;
  if (masked) {
    mask = Field(Kokkos::view_alloc("mask", Kokkos::WithoutInitializing), 1, 1, D, H, W);
    fill(mask, seed, 2);
  }
  Exec().fence();
  const kssim::MaskMode mode = normalized ? kssim::MaskMode::Normalized : kssim::MaskMode::Weights;

  // The pieces the problem runs in (a training object plans them the same way, and reports them).
  const auto g = kssim::impl::make_geometry<5>({1, 1, D, H, W}, opts);
  const kssim::impl::PartialPlanes both{true, true};
  // Normalized statistics' plans take more workspace per piece than SSIM's (and map weights').
  using Slabs = kssim::impl::SlabPlan<Exec, float>;
  using NormalizedSlabs = kssim::impl::MaskedPlan<Exec, float>::NormalizedSlabs;
  const bool split = normalized ? NormalizedSlabs::needs_slabs(exec, g, opts, both) : Slabs::needs_slabs(exec, g, opts, both);
  const std::size_t budget_used = Slabs::budget(exec, opts);
  const auto pieces = !split       ? std::vector<kssim::impl::SlabPiece>{}
                      : normalized ? NormalizedSlabs::split(exec, g, opts, both, budget_used)
                                   : Slabs::split(exec, g, opts, both, budget_used);

  // Pass 1: mean and both gradients, one call.
  Field g1(Kokkos::view_alloc("g1", Kokkos::WithoutInitializing), 1, 1, D, H, W);
  Field g2(Kokkos::view_alloc("g2", Kokkos::WithoutInitializing), 1, 1, D, H, W);
  const double rss_before = peak_rss_gb();
  // The first call includes the first-use self-check and the workspace's allocation; with --repeat R,
  // grad_seconds is the fastest of the R - 1 calls after it.
  double mean = 0, grad_seconds = 0, first_seconds = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = now();
    mean = masked ? kssim::masked_ssim_grad(exec, x, y, mask, mode, g1, g2, opts)
                  : kssim::ssim_grad(exec, x, y, g1, g2, opts);
    const double t = seconds(t0, now());
    if (r == 0) first_seconds = grad_seconds = t;
    else grad_seconds = r == 1 ? t : std::min(grad_seconds, t);
  }
  const double rss_after = peak_rss_gb();

  // Sample boxes: across the slab borders first, then at random places.
  std::vector<std::array<int, 3>> origins;
  std::mt19937 rng{unsigned(seed)};
  const auto random_in = [&](int len) { return int(w + rng() % unsigned(len - b - 2 * w + 1)); };
  for (int k = 0; k < samples; ++k) {
    int d0 = random_in(D);
    const std::size_t border = 1 + k;  // the map row where slab `border` starts
    if (k < (samples + 1) / 2 && border < pieces.size())
      d0 = std::clamp(pieces[border].map0 - b / 2, w, D - b - w);
    origins.push_back({d0, random_in(H), random_in(W)});
  }
  kssim_test::ReferenceOptions ro;  // valid padding on the box: the full field's windows inside it
  ro.window = w;
  ro.sigma = opts.sigma;
  const kssim_test::Shape box{1, 1, b, b, b, true};
  const double map_full = double(g.map_size()), map_box = double(b - w + 1) * (b - w + 1) * (b - w + 1);
  // --masked: the whole map's weight; each box's gradient scales by its own weight over it.
  const int od = same ? D : D - w + 1, oh = same ? H : H - w + 1, ow = same ? W : W - w + 1;
  const double weight_full = masked ? weight_total(seed, od, oh, ow, H, W, same ? 0 : w / 2) : 0;
  double grad_err = 0, grad_scale = 0, map_err = 0, diff2 = 0, ref2 = 0;
  const auto host_box = [&](int which, const std::array<int, 3>& o) {
    std::vector<double> v(box.size());
    for (int d = 0; d < b; ++d)
      for (int h = 0; h < b; ++h)
        for (int i = 0; i < b; ++i) {
          const std::uint64_t idx = (std::uint64_t(o[0] + d) * H + (o[1] + h)) * W + (o[2] + i);
          v[box.index(0, 0, d, h, i)] = which == 2 ? mask_voxel(seed, idx) : voxel(seed, idx, which);
        }
    return v;
  };
  std::vector<kssim_test::ReferenceResult> refs;
  for (const auto& o : origins) {
    const auto bx = host_box(0, o), by = host_box(1, o);
    double box_scale = map_box / map_full;  // the box's mean over the field's: its share of the field's map
    if (masked) {
      const auto bm = host_box(2, o);
      const auto mr = kssim_test::reference_masked_ssim(box, bx, by, bm, 1, ro, normalized, true);
      double weight_box = 0;  // the box's map voxels' weights: the mask at their window centres
      for (int d = 0; d + w <= b; ++d)
        for (int h = 0; h + w <= b; ++h)
          for (int i = 0; i + w <= b; ++i) weight_box += bm[box.index(0, 0, d + w / 2, h + w / 2, i + w / 2)];
      box_scale = weight_box / weight_full;
      kssim_test::ReferenceResult r;
      r.map_shape = mr.map_shape;
      r.map = mr.map;
      r.grad1 = mr.grad1;
      r.grad2 = mr.grad2;
      refs.push_back(r);
    } else {
      refs.push_back(kssim_test::reference_ssim(box, bx, by, ro, true));
    }
    const int oo[3] = {o[0], o[1], o[2]};
    const auto k1 = box_of(g1, oo, b), k2 = box_of(g2, oo, b);
    for (int d = inner; d < b - inner; ++d)
      for (int h = inner; h < b - inner; ++h)
        for (int i = inner; i < b - inner; ++i) {
          const std::size_t q = box.index(0, 0, d, h, i);
          const double r1 = refs.back().grad1[q] * box_scale, r2 = refs.back().grad2[q] * box_scale;
          grad_err = std::max({grad_err, std::abs(k1[q] - r1), std::abs(k2[q] - r2)});
          diff2 += (k1[q] - r1) * (k1[q] - r1) + (k2[q] - r2) * (k2[q] - r2);
          ref2 += r1 * r1 + r2 * r2;
          grad_scale = std::max({grad_scale, std::abs(r1), std::abs(r2)});
        }
  }
  // --masked: plain SSIM of the same images, timed the same way (fastest of the calls after the first).
  double ssim_seconds = 0;
  if (masked)
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = now();
      kssim::ssim_grad(exec, x, y, g1, g2, opts);
      const double t = seconds(t0, now());
      ssim_seconds = r <= 1 ? t : std::min(ssim_seconds, t);
    }
  g1 = Field();
  g2 = Field();

  // Pass 2 (--map): the map, compared at the boxes' map pixels.
  double map_seconds = 0;
  if (check_map) {
    Field map(Kokkos::view_alloc("map", Kokkos::WithoutInitializing), 1, 1, od, oh, ow);
    const auto t1 = now();
    if (masked)
      kssim::masked_ssim_map(exec, x, y, mask, mode, map, opts);
    else
      kssim::ssim_map(exec, x, y, map, opts);
    Exec().fence();
    map_seconds = seconds(t1, now());
    const int shift = same ? w / 2 : 0, m = b - w + 1;  // box map pixel j is the field's map pixel o + j + shift
    for (std::size_t k = 0; k < origins.size(); ++k) {
      const int oo[3] = {origins[k][0] + shift, origins[k][1] + shift, origins[k][2] + shift};
      const auto km = box_of(map, oo, m);
      for (int d = 0; d < m; ++d)
        for (int h = 0; h < m; ++h)
          for (int i = 0; i < m; ++i)
            map_err = std::max(map_err, std::abs(km[(std::size_t(d) * m + h) * m + i] -
                                                 refs[k].map[refs[k].map_shape.index(0, 0, d, h, i)]));
    }
  }

  const double voxels = double(D) * H * W;
  const double grad_rel_l2 = std::sqrt(diff2 / ref2);
  std::printf("{\"dims\": [%d, %d, %d], \"voxels\": %.0f, \"padding\": \"%s\", \"budget\": %zu, \"pieces\": %zu, "
              "\"mean\": %.9f, \"grad_seconds\": %.4f, \"first_call_seconds\": %.4f, \"repeat\": %d, \"map_seconds\": %.3f, \"peak_rss_gb\": %.3f, "
              "\"rss_before_call_gb\": %.3f, \"samples\": %zu, \"grad_rel_l2\": %.3e, \"grad_max_abs_err\": %.3e, \"grad_max_abs\": %.3e, "
              "\"map_max_abs_err\": %.3e, \"masked\": %s, \"ssim_grad_seconds\": %.4f, \"backend\": \"%s\"}\n",
              D, H, W, voxels, same ? "same" : "valid", budget_used, split ? pieces.size() : std::size_t(1), mean, grad_seconds, first_seconds, repeat,
              map_seconds, rss_after, rss_before, origins.size(), grad_rel_l2, grad_err, grad_scale, check_map ? map_err : -1.0,
              !masked ? "false" : normalized ? "\"normalized\"" : "\"weights\"", ssim_seconds, Exec::name());
  char map_note[64] = "";
  if (check_map) std::snprintf(map_note, sizeof map_note, ", map max error %.2e", map_err);
  const bool ok = grad_rel_l2 <= 1e-5 && (!check_map || map_err <= 1e-6) && std::isfinite(mean);
  char masked_note[96] = "";
  if (masked)
    std::snprintf(masked_note, sizeof masked_note, "; masked %s, SSIM's fwd+bwd %.3f s (masked over SSIM %.3f)",
                  normalized ? "normalized" : "weights", ssim_seconds, grad_seconds / ssim_seconds);
  std::printf("%s: %dx%dx%d (%.3g voxels) mean %.7f, fwd+bwd %.3f s, peak RSS %.2f GB; %zu sample boxes: "
              "gradients' relative L2 error %.2e (max error %.2e of max %.2e)%s%s\n",
              ok ? "PASS" : "FAIL", D, H, W, voxels, mean, grad_seconds, rss_after, origins.size(), grad_rel_l2, grad_err,
              grad_scale, map_note, masked_note);
  return ok ? 0 : 1;
}
