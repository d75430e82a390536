// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// SSIMULACRA2, the perceptual image metric of Cloudinary / libjxl (scores up to 100 = identical; 90: visually
// lossless, 70: high quality, 50: medium, 30: low), on Kokkos, matching libjxl's `ssimulacra2` tool.
//
//   // One score per image pair: reference and distorted are (N, 3, H, W) float Views, sRGB in [0, 1].
//   kssim::ssimulacra2(exec, reference, distorted, scores);                  // scores: (N) View
//
//   // A cached reference: its XYB pyramid and blurred statistics are computed once, then compared with any
//   // number of distorted images, one or a batch at a time (same scores as above, bit for bit).
//   kssim::Ssimulacra2Reference<Kokkos::DefaultExecutionSpace> ref(exec, reference);  // image 0 of the View
//   ref.compare(exec, distorted_batch, scores);                              // (B, 3, H, W) -> (B)
//
// Images must be at least 8 x 8 pixels, as for the reference tool. Like the tool, images smaller than
// 113 x 113 get fewer than six scales (the tool stops before a scale whose predecessor is smaller than 8 x 8)
// and, with them, the tool's shifted weights (Features.hpp): the scores equal the tool's, though the metric
// was calibrated on six scales. The workspace is allocated once per object and batch size and reused.

#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/ssimulacra2/Constants.hpp>
#include <kssim/impl/ssimulacra2/Downscale.hpp>
#include <kssim/impl/ssimulacra2/ErrorMaps.hpp>
#include <kssim/impl/ssimulacra2/Features.hpp>
#include <kssim/impl/ssimulacra2/Linearize.hpp>
#include <kssim/impl/ssimulacra2/Planes.hpp>
#include <kssim/impl/ssimulacra2/RecursiveBlur.hpp>
#include <kssim/impl/ssimulacra2/SelfCheck.hpp>
#include <kssim/impl/ssimulacra2/Xyb.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kssim {

// How the input values are encoded.
enum class ColorEncoding {
  Srgb,   // sRGB transfer function, values in [0, 1] (8-bit PNG / 255)
  Linear  // linear-light sRGB primaries (finite; the metric clamps negative opsin responses as the tool does)
};

struct Ssimulacra2Options {
  ColorEncoding encoding = ColorEncoding::Srgb;
  // Reject NaN/Inf (and, for sRGB, values outside [0, 1]) with std::invalid_argument. One reduction over
  // the input and a host synchronisation per call; turn off when the inputs are known to be valid.
  bool check_values = true;
};

namespace impl::s2 {

template <class View>
constexpr void check_ssimulacra2_view() {
  static_assert(Kokkos::is_view_v<View>, "kssim::ssimulacra2: images must be Kokkos::Views");
  static_assert(View::rank() == 4, "kssim::ssimulacra2: images must be rank 4 (N, 3, H, W)");
  static_assert(std::is_same_v<std::remove_const_t<typename View::value_type>, float>,
                "kssim::ssimulacra2: images must hold float");
}

template <class View>
StridedInput strided_input(const View& v) {
  return {v.data(), std::int64_t(v.stride(0)), std::int64_t(v.stride(1)), std::int64_t(v.stride(2)),
          std::int64_t(v.stride(3))};
}

inline std::string shape_of(int n, int c, int h, int w) {
  return "(" + std::to_string(n) + ", " + std::to_string(c) + ", " + std::to_string(h) + ", " + std::to_string(w) + ")";
}

template <class View>
void require_rgb_image(const char* name, const View& v) {
  const int n = int(v.extent(0)), c = int(v.extent(1)), h = int(v.extent(2)), w = int(v.extent(3));
  if (c != 3)
    throw std::invalid_argument(std::string("kssim: ssimulacra2 needs RGB images with 3 channels, ") + name +
                                " has extents " + shape_of(n, c, h, w) + " (blend alpha and expand grey first)");
  if (h < min_extent || w < min_extent)
    throw std::invalid_argument(std::string("kssim: ssimulacra2 needs images of at least ") +
                                std::to_string(min_extent) + " x " + std::to_string(min_extent) + " pixels (as " +
                                "libjxl's tool), " + name + " is " + std::to_string(w) + " x " + std::to_string(h));
}

template <class ExecutionSpace, class View>
void require_valid_values(const ExecutionSpace& exec, const char* name, const View& v, const Ssimulacra2Options& o) {
  if (!o.check_values || v.size() == 0) return;
  const bool srgb = o.encoding == ColorEncoding::Srgb;
  const InputFaults f = check_input(exec, strided_input(v), int(v.extent(0)), int(v.extent(2)), int(v.extent(3)), srgb);
  if (f.nonfinite)
    throw std::invalid_argument(std::string("kssim: ssimulacra2: ") + name + " has " + std::to_string(f.nonfinite) +
                                " NaN or infinite values");
  if (f.out_of_range)
    throw std::invalid_argument(std::string("kssim: ssimulacra2: ") + name + " has " +
                                std::to_string(f.out_of_range) +
                                " values outside [0, 1] (sRGB input; use ColorEncoding::Linear for linear light)");
}

// Asks Linux for transparent huge pages on a host View's memory before its first touch: the workspace at
// 1080p is 230 MB, and faulting it in 4 KiB pages (with the kernel zeroing each) took longer than a
// comparison. A hint only; nothing changes where it is not granted.
template <class View>
void advise_huge_pages(const View& v) {
#if defined(__linux__)
  if constexpr (std::is_same_v<typename View::memory_space, Kokkos::HostSpace>) {
    constexpr std::uintptr_t huge = std::uintptr_t(1) << 21;
    const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(v.data()) + huge - 1) & ~(huge - 1);
    const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(v.data() + v.size())) & ~(huge - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#else
  (void)v;
#endif
}

template <class T, class Mem>
Kokkos::View<T*, Mem> uninitialized(const char* label, std::size_t n) {
  Kokkos::View<T*, Mem> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
  advise_huge_pages(v);
  return v;
}

// Temporary planes for `slots` images of h x w (one slot per distorted image of a batch).
template <class Mem>
struct Workspace {
  int slots = 0, h = 0, w = 0, scales = 0;
  // Linear RGB of even / odd scales (the odd ones are at most 1/4 the size). A distorted image's scale is
  // downscaled into the other buffer first, then turned into XYB in place: no separate XYB planes.
  Kokkos::View<float*, Mem> linear[2];
  Kokkos::View<float*, Mem> blurred[3];  // horizontal-pass outputs of the current scale
  Kokkos::View<double*, Mem> col_sums;  // per-column error sums of all scales
  Kokkos::View<double**, Mem> features;  // (slots, 108)
  ScaleSums layout{};

  Workspace() = default;
  Workspace(int slots_, int h_, int w_) : slots(slots_), h(h_), w(w_), scales(scale_count(h_, w_)) {
    const std::size_t full = std::size_t(slots) * 3 * PlaneShape{h, w}.size();
    const std::size_t half = std::size_t(slots) * 3 * scale_shape(h, w, 1).size();
    linear[0] = uninitialized<float, Mem>("kssim::s2::linear0", full);
    linear[1] = uninitialized<float, Mem>("kssim::s2::linear1", half);
    for (auto& b : blurred) b = uninitialized<float, Mem>("kssim::s2::blurred", full);
    std::int64_t off = 0;
    for (int s = 0; s < num_scales; ++s) {
      const PlaneShape sh = scale_shape(h, w, s);
      layout.offset[s] = off;
      layout.columns[s] = sh.w;
      layout.pixels[s] = double(sh.size());
      off += std::int64_t(slots) * 3 * num_stats * sh.w;
    }
    layout.scales = scales;
    col_sums = Kokkos::View<double*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim::s2::col_sums"), off);
    features = Kokkos::View<double**, Mem>("kssim::s2::features", slots, num_features);
  }

  std::size_t bytes() const {
    std::size_t b = linear[0].size() + linear[1].size();
    for (const auto& v : blurred) b += v.size();
    return b * sizeof(float) + (col_sums.size() + features.size()) * sizeof(double);
  }
};

inline AxisGeometry horizontal(int planes, PlaneShape s) {
  return {planes, s.w, s.h, std::int64_t(s.size()), 1, s.w};
}
inline AxisGeometry vertical(int planes, PlaneShape s) {
  return {planes, s.h, s.w, std::int64_t(s.size()), s.w, 1};
}

// Linear RGB of scale s of every slot, in ws.linear[s % 2]: from the input at s = 0; else already there
// (next_scale() of scale s - 1).
template <class ExecutionSpace, class Mem>
float* linear_scale(const ExecutionSpace& exec, Workspace<Mem>& ws, const StridedInput& in, int images, int s,
                    bool srgb) {
  float* out = ws.linear[s % 2].data();
  if (s == 0) linearize(exec, in, images, ws.h, ws.w, srgb, out);
  return out;
}

// Downscales scale s's linear RGB into ws.linear[(s + 1) % 2], before scale s becomes XYB in place.
template <class ExecutionSpace, class Mem>
void next_scale(const ExecutionSpace& exec, Workspace<Mem>& ws, int images, int s) {
  if (s + 1 < ws.scales)
    downscale(exec, ws.linear[s % 2].data(), images * 3, scale_shape(ws.h, ws.w, s), scale_shape(ws.h, ws.w, s + 1),
              ws.linear[(s + 1) % 2].data());
}

}  // namespace impl::s2

// A reference image's XYB pyramid and blurred statistics (mu, sigma^2 per channel and scale), for comparing
// many distorted images with it. compare() allocates nothing after the first call with a given batch size,
// and does not synchronise the host beyond the optional value check.
template <class ExecutionSpace>
class Ssimulacra2Reference {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>,
                "kssim::Ssimulacra2Reference: the template argument must be a Kokkos execution space");

 public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;

  // Image `index` of `reference` ((N, 3, H, W), float) becomes the reference.
  template <class View>
  Ssimulacra2Reference(const ExecutionSpace& exec, const View& reference, int index = 0,
                       const Ssimulacra2Options& opts = {})
      : opts_(opts), coeffs_(impl::s2::make_iir_coefficients(1.5)) {
    set_reference(exec, reference, index);
  }

  // Replaces the reference (same or different extents) with image `index` of `reference`.
  template <class View>
  void set_reference(const ExecutionSpace& exec, const View& reference, int index = 0) {
    using namespace impl::s2;
    check_ssimulacra2_view<View>();
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible,
                  "kssim::ssimulacra2: the reference's memory space must be accessible from the execution space");
    require_rgb_image("the reference", reference);
    if (index < 0 || index >= int(reference.extent(0)))
      throw std::invalid_argument("kssim: ssimulacra2: reference index " + std::to_string(index) +
                                  " is outside the View's " + std::to_string(reference.extent(0)) + " images");
    auto one = Kokkos::subview(reference, Kokkos::make_pair(index, index + 1), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    impl::s2::ensure_self_checked(exec);  // before the first kernel
    require_valid_values(exec, "the reference", one, opts_);
    h_ = int(reference.extent(2));
    w_ = int(reference.extent(3));
    const std::size_t pyramid = 3 * pyramid_offset(h_, w_, num_scales);
    if (xyb_.size() != pyramid) {
      xyb_ = uninitialized<float, memory_space>("kssim::s2::ref_xyb", pyramid);
      mu_ = uninitialized<float, memory_space>("kssim::s2::ref_mu", pyramid);
      sigma_ = uninitialized<float, memory_space>("kssim::s2::ref_sigma", pyramid);
    }
    workspace(1);
    const bool srgb = opts_.encoding == ColorEncoding::Srgb;
    const StridedInput in = strided_input(one);
    for (int s = 0; s < ws_.scales; ++s) {
      const PlaneShape sh = scale_shape(h_, w_, s);
      const float* linear = linear_scale(exec, ws_, in, 1, s, srgb);
      next_scale(exec, ws_, 1, s);
      float* xyb = scale_planes(xyb_, s);
      to_xyb(exec, linear, 1, sh, xyb);
      // Horizontal: blur(a), blur(a * a); vertical: mu and sigma^2 (before subtracting mu^2).
      const float* hin[1] = {xyb};
      iir_pass<2, IirMode::Reference>(exec, coeffs_, hin, horizontal(3, sh),
                                      WriteSink<2>{{ws_.blurred[0].data(), ws_.blurred[1].data()}});
      const float* vin[2] = {ws_.blurred[0].data(), ws_.blurred[1].data()};
      iir_pass<2, IirMode::Plain>(exec, coeffs_, vin, vertical(3, sh),
                                  WriteSink<2>{{scale_planes(mu_, s), scale_planes(sigma_, s)}});
    }
  }

  int height() const { return h_; }
  int width() const { return w_; }
  // The number of scales of the reference's size: 6 from 113 x 113 up, fewer below (down to 2 at 8 x 8).
  int scales() const { return impl::s2::scale_count(h_, w_); }

  // Scores of each distorted image ((B, 3, H, W), float, same H and W) against the reference, into
  // `scores` (a rank-1 View of B float or double values).
  template <class View, class ScoreView>
  void compare(const ExecutionSpace& exec, const View& distorted, const ScoreView& scores) {
    using namespace impl::s2;
    check_ssimulacra2_view<View>();
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible,
                  "kssim::ssimulacra2: the distorted images' memory space must be accessible from the execution space");
    static_assert(Kokkos::is_view_v<ScoreView> && ScoreView::rank() == 1, "kssim::ssimulacra2: scores must be a rank-1 View");
    using Score = typename ScoreView::value_type;
    static_assert(std::is_floating_point_v<Score> && !std::is_const_v<Score>,
                  "kssim::ssimulacra2: scores must hold a non-const floating-point type");
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename ScoreView::memory_space>::accessible,
                  "kssim::ssimulacra2: the scores' memory space must be accessible from the execution space");
    require_rgb_image("the distorted images", distorted);
    const int images = int(distorted.extent(0));
    if (int(distorted.extent(2)) != h_ || int(distorted.extent(3)) != w_)
      throw std::invalid_argument("kssim: ssimulacra2: the distorted images are " + std::to_string(distorted.extent(3)) +
                                  " x " + std::to_string(distorted.extent(2)) + ", the reference is " +
                                  std::to_string(w_) + " x " + std::to_string(h_));
    if (int(scores.extent(0)) != images)
      throw std::invalid_argument("kssim: ssimulacra2: scores has " + std::to_string(scores.extent(0)) +
                                  " elements for " + std::to_string(images) + " distorted images");
    if (images == 0) return;
    require_valid_values(exec, "the distorted images", distorted, opts_);
    workspace(images);
    const bool srgb = opts_.encoding == ColorEncoding::Srgb;
    const StridedInput in = strided_input(distorted);
    const int planes = images * 3;
    for (int s = 0; s < ws_.scales; ++s) {
      const PlaneShape sh = scale_shape(h_, w_, s);
      float* xyb = linear_scale(exec, ws_, in, images, s, srgb);
      next_scale(exec, ws_, images, s);
      to_xyb(exec, xyb, images, sh, xyb);  // in place
      const float* ref_xyb = scale_planes(xyb_, s);
      // Horizontal: blur(b), blur(b * b), blur(a * b), with a the reference (one image for the whole batch).
      const float* hin[2] = {ref_xyb, xyb};
      iir_pass<3, IirMode::Distorted>(exec, coeffs_, hin, horizontal(planes, sh),
                                      WriteSink<3>{{ws_.blurred[0].data(), ws_.blurred[1].data(), ws_.blurred[2].data()}});
      // Vertical, consumed by the error maps.
      const float* vin[3] = {ws_.blurred[0].data(), ws_.blurred[1].data(), ws_.blurred[2].data()};
      iir_pass<3, IirMode::Plain>(exec, coeffs_, vin, vertical(planes, sh),
                                  ErrorSink{scale_planes(mu_, s), scale_planes(sigma_, s), ref_xyb, xyb,
                            ws_.col_sums.data() + ws_.layout.offset[s]});
    }
    features_ = Kokkos::subview(ws_.features, Kokkos::make_pair(0, images), Kokkos::ALL);
    features_and_scores(exec, ws_.col_sums.data(), ws_.layout, images, ws_.features.data(), scores.data(),
                        std::int64_t(scores.stride(0)));
  }

  // The 108 features of each image of the last compare() ((B, 108): channel X/Y/B, scale 1:1..1:32,
  // 1-norm/4-norm, map SSIM/artifact/detail loss; 0 for the scales a small image does not have, scales());
  // valid until the next call.
  Kokkos::View<double**, memory_space> features() const { return features_; }

  // Bytes held: the reference's pyramids plus the workspace of the largest batch so far.
  std::size_t workspace_bytes() const {
    return (xyb_.size() + mu_.size() + sigma_.size()) * sizeof(float) + ws_.bytes();
  }

 private:
  float* scale_planes(const Kokkos::View<float*, memory_space>& v, int s) const {
    return v.data() + 3 * impl::s2::pyramid_offset(h_, w_, s);
  }
  void workspace(int slots) {
    if (ws_.slots < slots || ws_.h != h_ || ws_.w != w_) ws_ = impl::s2::Workspace<memory_space>(slots, h_, w_);
  }

  Ssimulacra2Options opts_;
  impl::s2::IirCoefficients coeffs_;
  int h_ = 0, w_ = 0;
  Kokkos::View<float*, memory_space> xyb_, mu_, sigma_;
  impl::s2::Workspace<memory_space> ws_;
  Kokkos::View<double**, memory_space> features_;
};

// SSIMULACRA2 of each pair (reference[n], distorted[n]) into scores[n]; both (N, 3, H, W) float Views.
// Computes exactly what Ssimulacra2Reference(reference, n).compare(distorted[n]) computes.
template <class ExecutionSpace, class RefView, class DistView, class ScoreView>
void ssimulacra2(const ExecutionSpace& exec, const RefView& reference, const DistView& distorted,
                 const ScoreView& scores, const Ssimulacra2Options& opts = {}) {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>,
                "kssim::ssimulacra2: the first argument must be an execution space");
  impl::s2::check_ssimulacra2_view<RefView>();
  impl::s2::check_ssimulacra2_view<DistView>();
  if (reference.extent(0) != distorted.extent(0) || reference.extent(1) != distorted.extent(1) ||
      reference.extent(2) != distorted.extent(2) || reference.extent(3) != distorted.extent(3))
    throw std::invalid_argument(
        "kssim: ssimulacra2: reference and distorted must have the same extents, got " +
        impl::s2::shape_of(int(reference.extent(0)), int(reference.extent(1)), int(reference.extent(2)),
                           int(reference.extent(3))) +
        " and " +
        impl::s2::shape_of(int(distorted.extent(0)), int(distorted.extent(1)), int(distorted.extent(2)),
                           int(distorted.extent(3))));
  if (scores.extent(0) != reference.extent(0))
    throw std::invalid_argument("kssim: ssimulacra2: scores has " + std::to_string(scores.extent(0)) +
                                " elements for " + std::to_string(reference.extent(0)) + " image pairs");
  const int n = int(reference.extent(0));
  if (n == 0) return;
  impl::s2::require_rgb_image("reference", reference);
  std::optional<Ssimulacra2Reference<ExecutionSpace>> ref;
  for (int i = 0; i < n; ++i) {
    if (!ref)
      ref.emplace(exec, reference, i, opts);
    else
      ref->set_reference(exec, reference, i);
    auto pair = Kokkos::make_pair(i, i + 1);
    ref->compare(exec, Kokkos::subview(distorted, pair, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL),
                 Kokkos::subview(scores, pair));
  }
}

}  // namespace kssim
