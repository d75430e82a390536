// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Masked SSIM, both modes: value, map, per-image and per-channel results and gradients against the
// independent float64 reference (ReferenceMaskedSSIM.hpp), central differences, the defined edge cases (NaN in
// masked-out data, windows without valid pixels, an empty mask), the training object, and bad input.
#include "ErrorRecord.hpp"
#include "ReferenceMaskedSSIM.hpp"
#include "SlabBudgets.hpp"
#include "TrainingChecks.hpp"
#include "TestingUtilities.hpp"

#include <limits>

using namespace kssim_test;
using kssim::MaskMode;

namespace {

// A mask of `channels` channels: an irregular region (a disc and a band) of weight 1 with soft, fractional
// edges, some pixels of exactly 0 inside it and some of exactly 1 outside.
// A disc of ones with a soft edge, a vertical band, and (speckle) isolated zeros and ones at random.
std::vector<double> region_mask(const Shape& image, int channels, unsigned seed, bool speckle = true) {
  Shape s = image;
  s.c = channels;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> m(s.size());
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c) {
      const double cy = s.h * (0.3 + 0.4 * u(rng)), cx = s.w * (0.3 + 0.4 * u(rng)), r = 0.3 * std::min(s.h, s.w);
      for (int d = 0; d < s.d; ++d)
        for (int h = 0; h < s.h; ++h)
          for (int w = 0; w < s.w; ++w) {
            const double dist = std::hypot(h - cy, w - cx) - r;
            double v = dist < -1 ? 1.0 : dist > 1 ? 0.0 : 0.5 - 0.5 * dist;
            if (std::abs(w - 0.7 * s.w) < 1.5) v = 1.0;  // a band
            const double coin = u(rng);
            if (speckle && coin < 0.03) v = 0.0;
            if (speckle && coin > 0.98) v = 1.0;
            m[s.index(n, c, d, h, w)] = v;
          }
    }
  return m;
}

Shape mask_shape(const Shape& image, int channels) {
  Shape s = image;
  s.c = channels;
  return s;
}

const char* mode_name(MaskMode mode) { return mode == MaskMode::Weights ? "weights" : "normalized"; }

// Value, map, per-image and per-channel means and both gradients of one pair against the reference.
template <class C, int Rank>
void expect_masked_matches_reference(const Shape& s, const ReferenceOptions& ro, MaskMode mode,
                                     const std::vector<double>& x, const std::vector<double>& y,
                                     const std::vector<double>& mask, int mask_channels,
                                     kssim::Schedule schedule = kssim::Schedule::Auto, std::size_t budget = 0) {
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  using Mem = typename C::memory_space;
  SCOPED_TRACE(describe(s, ro) + " mode " + mode_name(mode) + " mask channels " + std::to_string(mask_channels));
  const auto xr = rounded<T>(x), yr = rounded<T>(y), mr = rounded<T>(mask);
  const bool normalized = mode == MaskMode::Normalized;
  const MaskedReference ref = reference_masked_ssim(s, xr, yr, mr, mask_channels, ro, normalized, true);
  kssim::Options opts = to_options(ro);
  opts.schedule = schedule;
  opts.max_workspace_bytes = budget;
  Exec exec;
  auto a = to_view<C, Rank>("a", s, xr), b = to_view<C, Rank>("b", s, yr);
  auto m = to_view<C, Rank>("m", mask_shape(s, mask_channels), mr);

  const double value = kssim::masked_ssim(exec, a, b, m, mode, opts);
  record_error("value_error", std::abs(value - ref.mean));
  EXPECT_NEAR(value, ref.mean, value_tolerance<T>());
  Kokkos::View<double, Mem> mean("mean");
  kssim::masked_ssim(exec, a, b, m, mode, mean, opts);
  double mean_host = 0;
  Kokkos::deep_copy(mean_host, mean);
  EXPECT_NEAR(mean_host, ref.mean, value_tolerance<T>());

  auto map = make_view<C, Rank>("map", ref.map_shape);
  kssim::masked_ssim_map(exec, a, b, m, mode, map, opts);
  const double map_error = max_abs_error(from_view(map, ref.map_shape), ref.map);
  record_error("map_error", map_error);
  EXPECT_LE(map_error, map_tolerance<T>());

  Kokkos::View<double*, Mem> per_image("per_image", s.n);
  Kokkos::View<double**, Mem> per_channel("per_channel", s.n, s.c);
  kssim::masked_ssim_per_image(exec, a, b, m, mode, per_image, opts);
  kssim::masked_ssim_per_channel(exec, a, b, m, mode, per_channel, opts);
  auto pi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_image);
  auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
  for (int n = 0; n < s.n; ++n) {
    EXPECT_NEAR(pi(n), ref.per_image[n], value_tolerance<T>()) << "n " << n;
    for (int c = 0; c < s.c; ++c)
      EXPECT_NEAR(pc(n, c), ref.per_channel[std::size_t(n) * s.c + c], value_tolerance<T>()) << n << ", " << c;
  }

  auto g1 = make_view<C, Rank>("g1", s), g2 = make_view<C, Rank>("g2", s);
  EXPECT_NEAR(kssim::masked_ssim_grad(exec, a, b, m, mode, g1, g2, opts), ref.mean, value_tolerance<T>());
  const double e1 = relative_l2_error(from_view(g1, s), ref.grad1), e2 = relative_l2_error(from_view(g2, s), ref.grad2);
  record_error("gradient_error", std::max(e1, e2));
  EXPECT_LE(e1, gradient_tolerance<T>());
  EXPECT_LE(e2, gradient_tolerance<T>());
  auto h2 = make_view<C, Rank>("h2", s);
  kssim::masked_ssim_grad(exec, a, b, m, mode, decltype(h2){}, h2, opts);
  EXPECT_LE(relative_l2_error(from_view(h2, s), ref.grad2), gradient_tolerance<T>());
}

// Masked SSIM (either mode) within workspace budgets that split the problem into groups of images, of channels and
// slabs (Slabs.hpp), with every schedule: the one-call functions against the reference, and the training object's
// value and recomputed backward too.
template <class C, int Rank>
void expect_split_matches_reference(MaskMode mode, const Shape& s, int rows, unsigned seed) {
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  Exec exec;
  for (bool same : {false, true}) {
    ReferenceOptions ro;
    ro.same = same;
    const int mask_channels = same ? 1 : s.c;
    const auto x = random_image(s, seed++), y = noisy_copy(x, seed++, 0.1);
    const auto m = region_mask(s, mask_channels, seed++);
    const auto xr = rounded<T>(x), yr = rounded<T>(y), mr = rounded<T>(m);
    const bool normalized = mode == MaskMode::Normalized;
    const MaskedReference ref = reference_masked_ssim(s, xr, yr, mr, mask_channels, ro, normalized, true);
    auto a = to_view<C, Rank>("a", s, xr), b = to_view<C, Rank>("b", s, yr);
    auto mask = to_view<C, Rank>("m", mask_shape(s, mask_channels), mr);
    const auto schedules =
        normalized ? normalized_schedules_for<C, Rank>(to_options(ro)) : schedules_for<C, Rank>(to_options(ro));
    for (const kssim::Schedule schedule : schedules) {
      kssim::Options o = to_options(ro);
      o.schedule = schedule;
      for (const auto& [level, budget] : budgets<C, Rank>(s, o, rows, {true, true}, normalized)) {
        SCOPED_TRACE(describe(s, ro) + ", schedule " + kssim::to_string(schedule) + ", split into " + level);
        kssim::Options split = o;
        split.max_workspace_bytes = budget;
        kssim::MaskedSSIM<Exec, T, Rank> loss(exec, object_extents<Rank>(s), mode, split, kssim::Gradients::Both);
        ASSERT_GT(loss.pieces(), 1);  // the split happens
        expect_masked_matches_reference<C, Rank>(s, ro, mode, x, y, m, mask_channels, schedule, budget);
        loss.forward(a, b, mask);
        EXPECT_NEAR(loss.value_on_host(), ref.mean, value_tolerance<T>());
        auto t1 = make_view<C, Rank>("t1", s), t2 = make_view<C, Rank>("t2", s);
        loss.backward(t1, t2);
        EXPECT_LE(relative_l2_error(from_view(t1, s), ref.grad1), gradient_tolerance<T>());
        EXPECT_LE(relative_l2_error(from_view(t2, s), ref.grad2), gradient_tolerance<T>());
        // A mask value outside [0, 1], in the last pixel (no valid map is centred there), is caught in pieces
        // too: the whole problem's mask is checked, and the flag is the whole problem's.
        std::vector<double> bad_values = mr;
        bad_values.back() = 1.5;
        auto bad = to_view<C, Rank>("bad", mask_shape(s, mask_channels), bad_values);
        loss.forward(a, b, bad);
        EXPECT_TRUE(std::isnan(loss.value_on_host()));
        EXPECT_THROW(kssim::masked_ssim(exec, a, b, bad, mode, split), std::invalid_argument);
      }
    }
  }
}

template <class Call>
void expect_invalid_argument(const Call& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one mentioning '" << words << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

}  // namespace

template <class C>
class Masked : public ::testing::Test {};
TYPED_TEST_SUITE(Masked, AllConfigs, ConfigNames);

TYPED_TEST(Masked, MatchesReferenceInBothModesAndPaddings) {
  const Shape shapes[] = {{2, 3, 1, 31, 37}, {1, 2, 1, 24, 19}};
  unsigned seed = 400;
  for (const Shape& s : shapes)
    for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized})
      for (bool same : {false, true})
        for (int mask_channels : {1, s.c}) {
          ReferenceOptions ro;
          ro.same = same;
          const auto x = random_image(s, seed++);
          const auto y = noisy_copy(x, seed++, 0.1);  // one seed each, in this order (arguments: any order)
          const auto m = region_mask(s, mask_channels, seed++);
          expect_masked_matches_reference<TypeParam, 4>(s, ro, mode, x, y, m, mask_channels);
        }
}

TYPED_TEST(Masked, MatchesReferenceForOtherWindowsAndRanges) {
  const Shape s{1, 2, 1, 33, 29};
  struct Case {
    int window;
    double sigma, range;
    bool same;
  };
  const Case cases[] = {{3, 0.7, 1, false}, {7, 1.2, 1, true}, {15, 2.0, 255, false}};
  unsigned seed = 420;
  for (const Case& c : cases)
    for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
      const ReferenceOptions ro{.window = c.window, .sigma = c.sigma, .data_range = c.range, .same = c.same};
      const auto x = random_image(s, seed++, 0, c.range);
      const auto y = noisy_copy(x, seed++, 0.15 * c.range);
      const auto m = region_mask(s, 1, seed++);
      expect_masked_matches_reference<TypeParam, 4>(s, ro, mode, x, y, m, 1);
    }
}

TYPED_TEST(Masked, MatchesReferenceForVolumes) {
  Shape s{1, 2, 12, 13, 11};
  s.volumetric = true;
  unsigned seed = 440;
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized})
    for (bool same : {false, true}) {
      ReferenceOptions ro;
      ro.window = 5;
      ro.sigma = 1.0;
      ro.same = same;
      const auto x = random_image(s, seed++);
      const auto y = noisy_copy(x, seed++, 0.1);
      const auto m = region_mask(s, 1, seed++);
      expect_masked_matches_reference<TypeParam, 5>(s, ro, mode, x, y, m, 1);
    }
}

// The images of the every-schedule tests below: several fused tiles and chains (host tiles are 64 x 128, GPU
// tiles up to 32 x 32) with partial tiles at the edges, both paddings, a broadcast mask (valid) and a per-channel
// one (same); f(shape, options, mask channels, x, y, mask) for each, the seeds counted from `seed`.
template <class F>
void for_each_tiled_masked_image(unsigned seed, const F& f) {
  const Shape images[] = {{1, 2, 1, 150, 141}, {2, 1, 1, 45, 70}};
  for (const Shape& s : images)
    for (bool same : {false, true}) {
      ReferenceOptions ro;
      ro.same = same;
      const int mask_channels = same ? s.c : 1;
      const auto x = random_image(s, seed++);
      const auto y = noisy_copy(x, seed++, 0.1);
      const auto m = region_mask(s, mask_channels, seed++);
      f(s, ro, mask_channels, x, y, m);
    }
}

// Map weights run on SSIM's plan (MapWeighting::Centre): every schedule the router can pick, forced in turn, on
// for_each_tiled_masked_image's images and on volumes; the fused forward's weighted mean both from its last team
// and from sum_map.
TYPED_TEST(Masked, WeightsMatchReferenceOnEverySchedule) {
  unsigned seed = 460;
  for_each_tiled_masked_image(seed, [&](const Shape& s, const ReferenceOptions& ro, int mask_channels, const auto& x,
                                        const auto& y, const auto& m) {
    for (kssim::Schedule schedule : schedules_for<TypeParam, 4>(to_options(ro)))
      for (const char* finish : {"0", "1"}) {
        if (schedule != kssim::Schedule::Fused && finish[0] == '1') continue;
        SCOPED_TRACE(std::string(schedule == kssim::Schedule::Fused ? "fused" : "stages") + " finish=" + finish);
        const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_FINISH", finish);
        kssim::free_workspaces();  // the one-call functions' plans are made anew, under the switch
        expect_masked_matches_reference<TypeParam, 4>(s, ro, MaskMode::Weights, x, y, m, mask_channels, schedule);
      }
  });
  seed += 12;  // the images' seeds
  Shape v{1, 2, 14, 17, 15};
  v.volumetric = true;
  const auto x = random_image(v, seed++);
  const auto y = noisy_copy(x, seed++, 0.1);
  const auto m = region_mask(v, 1, seed++);
  for (kssim::Schedule schedule : schedules_for<TypeParam, 5>(to_options(ReferenceOptions{}))) {
    SCOPED_TRACE(schedule == kssim::Schedule::Fused ? "volume, fused" : "volume, stages");
    expect_masked_matches_reference<TypeParam, 5>(v, ReferenceOptions{}, MaskMode::Weights, x, y, m, 1, schedule);
  }
}

// Normalized statistics on each schedule the router can pick for them, forced in turn (the fused forward:
// FusedNormalizedForward.hpp): for_each_tiled_masked_image's images, other windows. Volumes run the stage schedule
// only: forcing the fused one is refused.
TYPED_TEST(Masked, NormalizedMatchesReferenceOnEverySchedule) {
  unsigned seed = 480;
  for_each_tiled_masked_image(seed, [&](const Shape& s, const ReferenceOptions& ro, int mask_channels, const auto& x,
                                        const auto& y, const auto& m) {
    for (kssim::Schedule schedule : normalized_schedules_for<TypeParam, 4>(to_options(ro))) {
      SCOPED_TRACE(kssim::to_string(schedule));
      expect_masked_matches_reference<TypeParam, 4>(s, ro, MaskMode::Normalized, x, y, m, mask_channels, schedule);
    }
  });
  seed += 12;  // the images' seeds
  // Other tap counts (the GPU kernels' 7-tap instance and the run-time count), on a mask without isolated valid
  // pixels: their one-pixel windows amplify float rounding by 1 / C2 (include/kssim/impl/README.md, "The float
  // gradients of normalized statistics"), which took this case's gradients to 1.0005e-5 on CUDA, both schedules.
  const Shape s{1, 2, 1, 71, 53};
  for (const ReferenceOptions ro : {ReferenceOptions{.window = 7, .sigma = 1.2, .same = true},
                                    ReferenceOptions{.window = 15, .sigma = 2.0, .data_range = 255}}) {
    const auto x = random_image(s, seed++, 0, ro.data_range);
    const auto y = noisy_copy(x, seed++, 0.15 * ro.data_range);
    const auto m = region_mask(s, 1, seed++, false);
    for (kssim::Schedule schedule : normalized_schedules_for<TypeParam, 4>(to_options(ro))) {
      SCOPED_TRACE(kssim::to_string(schedule));
      expect_masked_matches_reference<TypeParam, 4>(s, ro, MaskMode::Normalized, x, y, m, 1, schedule);
    }
  }
  Shape v{1, 1, 12, 13, 11};
  v.volumetric = true;
  const auto in = noisy_views<TypeParam, 5>(v, seed++, 0.1);
  kssim::Options fused;
  fused.schedule = kssim::Schedule::Fused;
  typename TypeParam::execution_space exec;
  expect_invalid_argument([&] { kssim::masked_ssim(exec, in.a, in.b, in.a, MaskMode::Normalized, fused); },
                          "MaskMode::Normalized fuses images only");
}

// The fused normalized forward down chains of tiles (tile_chain, forced by KSSIM_TUNE_FUSED_FORWARD_CHAIN): each
// tile carries its halo rows' five planes to the next and leaves its own sums, so every chain gives the same map
// and mean, bit for bit, as single tiles; one chain also against the reference. Tall images: several tiles down
// on every backend (hosts 64 rows, GPU code paths 16), and a last chain shorter than the others.
TYPED_TEST(Masked, NormalizedChainsGiveTheSameMapAndMean) {
  using C = TypeParam;
  using T = typename C::value_type;
  kssim::Options fused;
  fused.schedule = kssim::Schedule::Fused;
  if (kssim::impl::choose_normalized_forward<typename C::execution_space, T>(
          typename C::execution_space{}, kssim::impl::make_geometry<4>({1, 1, 100, 100}, fused), fused) == 0)
    GTEST_SKIP() << "no fused normalized forward for this configuration";
  unsigned seed = 620;
  for (const bool same : {false, true}) {
    const Shape s{1, 2, 1, 331, 150};
    ReferenceOptions ro;
    ro.same = same;
    const auto x = random_image(s, seed++);
    const auto y = noisy_copy(x, seed++, 0.1);
    const auto mask = region_mask(s, 1, seed++);
    typename C::execution_space exec;
    auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, y), m = to_view<C>("m", mask_shape(s, 1), mask);
    kssim::Options o = to_options(ro);
    o.schedule = kssim::Schedule::Fused;
    std::vector<double> first_map;
    double first_mean = 0;
    for (const char* chain : {"1", "2", "3", "8"}) {
      SCOPED_TRACE(std::string("chain ") + chain + (same ? ", same" : ", valid"));
      const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_CHAIN", chain);
      kssim::free_workspaces();  // the one-call functions' plans are made anew, under the switch
      auto map = make_view<C>("map", reference_map_shape(s, ro));
      kssim::masked_ssim_map(exec, a, b, m, MaskMode::Normalized, map, o);
      const double mean = kssim::masked_ssim(exec, a, b, m, MaskMode::Normalized, o);
      const auto got = from_view(map, reference_map_shape(s, ro));
      if (first_map.empty()) {
        first_map = got;
        first_mean = mean;
        continue;
      }
      EXPECT_EQ(got, first_map);
      EXPECT_EQ(mean, first_mean);
      if (std::string(chain) == "3")
        expect_masked_matches_reference<C, 4>(s, ro, MaskMode::Normalized, x, y, mask, 1, kssim::Schedule::Fused);
    }
  }
}

TYPED_TEST(Masked, WeightsSplitIntoGroupsChannelsAndSlabs) {
  expect_split_matches_reference<TypeParam, 4>(MaskMode::Weights, {2, 3, 1, 40, 37}, 7, 560);
  Shape v{1, 2, 13, 12, 11};
  v.volumetric = true;
  expect_split_matches_reference<TypeParam, 5>(MaskMode::Weights, v, 2, 570);
}

// Normalized statistics in pieces (SlabPlan over NormalizedPlan): the recentring shifts of the whole slices from
// their masked pixels, each slab's windows renormalised over the pixels inside the image only where it ends.
TYPED_TEST(Masked, NormalizedSplitIntoGroupsChannelsAndSlabs) {
  expect_split_matches_reference<TypeParam, 4>(MaskMode::Normalized, {2, 2, 1, 31, 29}, 6, 580);
  Shape v{1, 2, 13, 12, 11};
  v.volumetric = true;
  expect_split_matches_reference<TypeParam, 5>(MaskMode::Normalized, v, 2, 590);
}

// A mask of ones: map weights give SSIM itself, to rounding.
TYPED_TEST(Masked, MaskOfOnesGivesSsim) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{2, 3, 1, 27, 30};
  const auto in = noisy_views<C>(s, 450, 0.1);
  auto ones = to_view<C>("m", mask_shape(s, 1), std::vector<double>(mask_shape(s, 1).size(), 1.0));
  typename C::execution_space exec;
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized})
    for (auto padding : {kssim::Padding::Valid, kssim::Padding::Same}) {
      kssim::Options o;
      o.padding = padding;
      const double plain = kssim::ssim(exec, in.a, in.b, o);
      if (mode == MaskMode::Normalized && padding == kssim::Padding::Same) {
        // No longer SSIM at the border: the zeros outside the image are not data.
        EXPECT_GT(std::abs(kssim::masked_ssim(exec, in.a, in.b, ones, mode, o) - plain), 1e-4);
        continue;
      }
      EXPECT_NEAR(kssim::masked_ssim(exec, in.a, in.b, ones, mode, o), plain, 2 * value_tolerance<T>())
          << mode_name(mode) << " " << kssim::to_string(padding);
    }
}

// Normalized statistics never read masked-out data: NaN and huge values there change nothing.
TYPED_TEST(Masked, NormalizedStatisticsIgnoreMaskedOutDataEvenNaN) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{1, 2, 1, 29, 26};
  const auto x = rounded<T>(random_image(s, 460));
  const auto y = rounded<T>(noisy_copy(x, 461, 0.1));
  const auto mask = region_mask(s, 1, 462);
  auto xp = x, yp = y;
  for (int c = 0; c < s.c; ++c)
    for (int h = 0; h < s.h; ++h)
      for (int w = 0; w < s.w; ++w)
        if (mask[mask_shape(s, 1).index(0, 0, 0, h, w)] == 0) {
          xp[s.index(0, c, 0, h, w)] = (h + w) % 2 ? std::numeric_limits<double>::quiet_NaN() : 1e30;
          yp[s.index(0, c, 0, h, w)] = -1e30;
        }
  // The centre pixels of the recentring shifts are masked out too (Recentring.hpp picks a valid sample).
  ReferenceOptions ro;
  const auto ref = reference_masked_ssim(s, x, y, rounded<T>(mask), 1, ro, true, true);
  typename C::execution_space exec;
  auto a = to_view<C>("a", s, xp), b = to_view<C>("b", s, yp), m = to_view<C>("m", mask_shape(s, 1), mask);
  auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
  EXPECT_NEAR(kssim::masked_ssim_grad(exec, a, b, m, MaskMode::Normalized, g1, g2), ref.mean, value_tolerance<T>());
  const auto got1 = from_view(g1, s), got2 = from_view(g2, s);
  EXPECT_LE(relative_l2_error(got1, ref.grad1), gradient_tolerance<T>());
  EXPECT_LE(relative_l2_error(got2, ref.grad2), gradient_tolerance<T>());
  for (std::size_t i = 0; i < got1.size(); ++i)
    if (!std::isfinite(xp[i])) ASSERT_EQ(got1[i], 0.0) << i;
}

// Normalized statistics: windows without a valid pixel have the map value 0 and do not count; the
// map elsewhere matches the reference.
TYPED_TEST(Masked, WindowsWithoutValidPixelsHaveMapZero) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{1, 1, 1, 40, 30};
  std::vector<double> mask(s.size(), 0.0);
  for (int h = 0; h < 15; ++h)
    for (int w = 0; w < s.w; ++w) mask[s.index(0, 0, 0, h, w)] = 1.0;  // rows 0-14 valid, 15-39 not
  const auto x = random_image(s, 470);
  ReferenceOptions ro;
  ro.same = true;
  const auto ref = reference_masked_ssim(s, rounded<T>(x), rounded<T>(noisy_copy(x, 471, 0.1)), mask, 1, ro, true, false);
  typename C::execution_space exec;
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, noisy_copy(x, 471, 0.1)), m = to_view<C>("m", s, mask);
  auto map = make_view<C>("map", s);
  kssim::masked_ssim_map(exec, a, b, m, MaskMode::Normalized, map, to_options(ro));
  const auto got = from_view(map, s);
  EXPECT_LE(max_abs_error(got, ref.map), map_tolerance<T>());
  for (int h = 15 + 5; h < s.h; ++h)  // every window reaches at most 5 rows up
    for (int w = 0; w < s.w; ++w) ASSERT_EQ(got[s.index(0, 0, 0, h, w)], 0.0) << h << ", " << w;
  EXPECT_NEAR(kssim::masked_ssim(exec, a, b, m, MaskMode::Normalized, to_options(ro)), ref.mean, value_tolerance<T>());
}

// Nothing to average: the mean is NaN and the gradients are 0.
TYPED_TEST(Masked, EmptyMaskGivesNaNAndZeroGradients) {
  using C = TypeParam;
  const Shape s{1, 2, 1, 20, 21};
  const auto x = random_image(s, 480);
  typename C::execution_space exec;
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, noisy_copy(x, 481, 0.1));
  auto zeros = make_view<C>("m", mask_shape(s, 1));
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
    auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
    EXPECT_TRUE(std::isnan(kssim::masked_ssim_grad(exec, a, b, zeros, mode, g1, g2))) << mode_name(mode);
    for (double g : from_view(g1, s)) ASSERT_EQ(g, 0.0);
    for (double g : from_view(g2, s)) ASSERT_EQ(g, 0.0);
  }
}

TYPED_TEST(Masked, IdenticalImagesGiveExactlyOne) {
  using C = TypeParam;
  const Shape s{1, 3, 1, 25, 22};
  auto a = to_view<C>("a", s, random_image(s, 490));
  auto m = to_view<C>("m", s, region_mask(s, 3, 491));
  typename C::execution_space exec;
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
    SCOPED_TRACE(mode_name(mode));
    auto g1 = make_view<C>("g1", s);
    expect_identical_images_give(kssim::masked_ssim_grad(exec, a, a, m, mode, g1), 1.0, s,
                                 std::is_same_v<typename C::value_type, float> ? 1e-6 : 1e-14, g1);
  }
}

// Central differences of the library's own double value at random pixels of both images.
TYPED_TEST(Masked, GradientsMatchFiniteDifferences) {
  using C = TypeParam;
  const Shape s{1, 2, 1, 17, 19};
  kssim::Options o;
  o.window_size = 7;
  typename C::execution_space exec;
  auto m = to_view<C>("m", mask_shape(s, 1), region_mask(s, 1, 502));
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
    SCOPED_TRACE(mode_name(mode));
    expect_finite_differences_in_double<C>(
        s, 500,
        [&](const auto& a, const auto& b, auto& g1, auto& g2) {
          kssim::masked_ssim_grad(exec, a, b, m, mode, g1, g2, o);
        },
        [&](const auto& a, const auto& b) { return kssim::masked_ssim(exec, a, b, m, mode, o); }, 1e-5, 1e-10, 10, 503);
  }
}

// make(gradients) for the checks of TrainingChecks.hpp.
template <class C>
auto masked_object(const Shape& s, MaskMode mode) {
  using Exec = typename C::execution_space;
  return [s, mode](kssim::Gradients which) {
    return kssim::MaskedSSIM<Exec, typename C::value_type>(Exec(), {s.n, s.c, s.h, s.w}, mode, {}, which);
  };
}

TYPED_TEST(Masked, TrainingObjectMatchesOneCallFunctionsAndAccumulates) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 28, 33};
  const auto in = noisy_views<C>(s, 510, 0.1);
  auto m = to_view<C>("m", mask_shape(s, 1), region_mask(s, 1, 512));
  typename C::execution_space exec;
  const auto forward = [&](auto& loss) { loss.forward(in.a, in.b, m); };
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
    SCOPED_TRACE(mode_name(mode));
    const auto make = masked_object<C>(s, mode);
    const auto one_call = [&](const auto& g1, const auto& g2) {
      return kssim::masked_ssim_grad(exec, in.a, in.b, m, mode, g1, g2);
    };
    expect_training_object_agrees_with_one_call_function<C>(s, make, forward, one_call, 513);
    expect_forward_into_writes_the_value_as_float<C>(
        make, [&](auto& loss, float* value) { loss.forward_into(in.a, in.b, m, value); });
  }
}

TYPED_TEST(Masked, TrainingStepsAllocateNothingAndNeverSynchronise) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 40, 44};
  const auto in = noisy_views<C>(s, 515, 0.1);
  auto m = to_view<C>("m", mask_shape(s, 1), region_mask(s, 1, 517));
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
    SCOPED_TRACE(mode_name(mode));
    expect_training_steps_allocate_nothing_and_never_synchronise<C>(s, masked_object<C>(s, mode),
                                                                    [&](auto& loss) { loss.forward(in.a, in.b, m); });
  }
}

// The check reaches every mask value: one bad value at the first, the last, and at the edges of the chunks the
// check splits the mask into (packed masks: runs of 8 or 64 values; other layouts: rows), broadcast and
// per-channel masks, odd sizes; its flag read by sum_map or by the fused forward's last team, and reset for
// the next call.
TYPED_TEST(Masked, ChecksEveryMaskValue) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 19, 23};
  const auto in = noisy_views<C>(s, 525, 0.1);
  typename C::execution_space exec;
  for (const char* finish : {"0", "1"})
  for (const int channels : {1, 3}) {
    SCOPED_TRACE(std::string("finish=") + finish);
    const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_FINISH", finish);
    kssim::free_workspaces();
    const auto good = to_view<C>("m", mask_shape(s, channels), std::vector<double>(mask_shape(s, channels).size(), 0.5));
    const std::size_t size = mask_shape(s, channels).size();
    for (const std::size_t at : {std::size_t(0), std::size_t(7), std::size_t(8), std::size_t(63), std::size_t(64),
                                 size / 2 + 1, size - 9, size - 8, size - 1}) {
      std::vector<double> values(size, 0.5);
      values[at] = 1.25;
      auto m = to_view<C>("m", mask_shape(s, channels), values);
      expect_invalid_argument([&] { kssim::masked_ssim(exec, in.a, in.b, m, MaskMode::Weights); }, "[0, 1]");
      EXPECT_FALSE(std::isnan(kssim::masked_ssim(exec, in.a, in.b, good, MaskMode::Weights)));
    }
  }
}

// Window::Float32's map kernels have no weighted form: a plan asked for both refuses, rather than running the
// unweighted map (MaskedSSIM refuses the window before it makes the plan; this is the plan's own guard).
TYPED_TEST(Masked, PlanRefusesMapWeightsWithTheFloat32Window) {
  using Exec = typename TypeParam::execution_space;
  using T = typename TypeParam::value_type;
  kssim::Options o;
  o.window = kssim::Window::Float32;
  const auto g = kssim::impl::make_geometry<4>({1, 1, 32, 32}, o);
  EXPECT_THROW((kssim::impl::Plan<Exec, T>(Exec(), g, o, {}, true, kssim::impl::WithL1::No, nullptr,
                                           kssim::impl::MapWeighting::Centre)),
               std::invalid_argument);
}

TYPED_TEST(Masked, RejectsBadMasks) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s{1, 3, 1, 20, 24};
  const auto in = noisy_views<C>(s, 520, 0.1);
  Exec exec;
  for (MaskMode mode : {MaskMode::Weights, MaskMode::Normalized}) {
    auto wrong = make_view<C>("m", Shape{1, 2, 1, 20, 24});
    expect_invalid_argument([&] { kssim::masked_ssim(exec, in.a, in.b, wrong, mode); }, "mask has extents (1, 2, 20, 24)");
    auto smaller = make_view<C>("m", Shape{1, 1, 1, 20, 23});
    expect_invalid_argument([&] { kssim::masked_ssim(exec, in.a, in.b, smaller, mode); }, "(1, 1, 20, 24)");
    for (double bad : {-0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
      std::vector<double> values(mask_shape(s, 1).size(), 1.0);
      values[values.size() / 3] = bad;  // one pixel, far from the centres a valid map would weigh
      values[7] = bad;
      auto m = to_view<C>("m", mask_shape(s, 1), values);
      expect_invalid_argument([&] { kssim::masked_ssim(exec, in.a, in.b, m, mode); }, "[0, 1]");
      auto g1 = make_view<C>("g1", s);
      expect_invalid_argument([&] { kssim::masked_ssim_grad(exec, in.a, in.b, m, mode, g1); }, "[0, 1]");
      // Without synchronisation: NaN, never a plausible number; and a good mask afterwards works again.
      kssim::MaskedSSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w}, mode);
      loss.forward(in.a, in.b, m);
      EXPECT_TRUE(std::isnan(loss.value_on_host())) << bad;
      auto ones = to_view<C>("ones", mask_shape(s, 1), std::vector<double>(values.size(), 1.0));
      loss.forward(in.a, in.b, ones);
      EXPECT_TRUE(std::isfinite(loss.value_on_host()));
    }
  }
}
