// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SSIM values of 2D images (mean, map, per image, per channel) against the float64 reference.
#include "SSIMChecks.hpp"
#include "SingleImageChecks.hpp"

using namespace kssim_test;

template <class C>
class SSIM2D : public ::testing::Test {};
TYPED_TEST_SUITE(SSIM2D, AllConfigs, ConfigNames);

TYPED_TEST(SSIM2D, MatchesReferenceOnNoisyRandomImages) {
  const Shape shapes[] = {{2, 3, 1, 37, 53}, {1, 1, 1, 11, 11}, {1, 7, 1, 16, 40}, {3, 1, 1, 23, 12}};
  unsigned seed = 1;
  for (const Shape& s : shapes)
    for_both_paddings([&](const ReferenceOptions& ro) {
      const auto [x, y] = next_noisy_pair(s, seed, 1, 0.1);
      expect_forward_matches_reference<TypeParam, 4>(s, ro, x, y, to_options(ro));
    });
}

TYPED_TEST(SSIM2D, WindowsAndSigmas) {
  const Shape s{1, 2, 1, 37, 33};
  const std::pair<int, double> cases[] = {{3, 0.5}, {7, 1.0}, {11, 1.5}, {15, 2.5}, {31, 5.0}};
  unsigned seed = 100;
  for (auto [window, sigma] : cases)
    for (bool same : {false, true}) {
      ReferenceOptions ro;
      ro.window = window;
      ro.sigma = sigma;
      ro.same = same;
      const auto [x, y] = next_noisy_pair(s, seed, 1, 0.2);
      expect_forward_matches_reference<TypeParam, 4>(s, ro, x, y, to_options(ro));
    }
}

TYPED_TEST(SSIM2D, DataRange255OnEightBitData) {
  const Shape s{2, 3, 1, 24, 29};
  ReferenceOptions ro;
  ro.data_range = 255;
  auto x = random_image(s, 7, 0, 255);
  for (double& v : x) v = std::round(v);
  auto y = noisy_copy(x, 8, 12.0);
  for (double& v : y) v = std::clamp(std::round(v), 0.0, 255.0);
  expect_forward_matches_reference<TypeParam, 4>(s, ro, x, y, to_options(ro));
}

TYPED_TEST(SSIM2D, CustomConstants) {
  const Shape s{1, 1, 1, 20, 20};
  ReferenceOptions ro;
  ro.k1 = 0.05;
  ro.k2 = 0.1;
  ro.data_range = 2;
  const auto x = random_image(s, 9, -1, 1);
  expect_forward_matches_reference<TypeParam, 4>(s, ro, x, noisy_copy(x, 10, 0.3), to_options(ro));
}

// Identical inputs give exactly 1: every map pixel, the mean, per image and per channel, in both
// paddings, also for data far from zero and for 8-bit data (LocalMoments.hpp, MapFormula.hpp).
TYPED_TEST(SSIM2D, IdenticalImagesGiveExactlyOne) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  const Shape s{2, 3, 1, 19, 21};
  const std::pair<double, double> ranges[] = {{0, 1}, {0, 255}, {1000, 1001}, {-3, 5}};
  unsigned seed = 11;
  for (auto [lo, hi] : ranges)
    for (auto padding : {kssim::Padding::Valid, kssim::Padding::Same}) {
      SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi) + " " + kssim::to_string(padding));
      const auto x = rounded<typename C::value_type>(random_image(s, seed++, lo, hi));
      auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, x);  // the same data in two Views
      kssim::Options o;
      o.padding = padding;
      o.data_range = hi - lo;
      Exec exec;
      EXPECT_EQ(kssim::ssim(exec, a, a, o), 1.0);
      EXPECT_EQ(kssim::ssim(exec, a, b, o), 1.0);
      const Shape ms{s.n, s.c, 1, padding == kssim::Padding::Valid ? s.h - 10 : s.h,
                     padding == kssim::Padding::Valid ? s.w - 10 : s.w};
      auto map = make_view<C>("map", ms);
      kssim::ssim_map(exec, a, b, map, o);
      for (double v : from_view(map, ms)) ASSERT_EQ(v, 1.0);
      Kokkos::View<double**, typename C::memory_space> per_channel("per_channel", s.n, s.c);
      kssim::ssim_per_channel(exec, a, b, per_channel, o);
      auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
      for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c) EXPECT_EQ(pc(n, c), 1.0);
    }
}

// No map pixel exceeds 1 beyond rounding, on pairs that differ by a few units in the last place, where
// the old formula gave 1 + 5e-7 in float.
TYPED_TEST(SSIM2D, MapNeverExceedsOne) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{1, 3, 1, 33, 35};
  unsigned seed = 40;
  for (double level : {0.0, 0.5, 100.0})
    for (double noise : {1e-7, 1e-4, 1e-2}) {
      const auto x = rounded<T>(random_image(s, seed++, level, level + 1));
      const auto y = rounded<T>(noisy_copy(x, seed++, noise));
      for (auto padding : {kssim::Padding::Valid, kssim::Padding::Same}) {
        kssim::Options o;
        o.padding = padding;
        auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, y);
        const Shape ms{s.n, s.c, 1, padding == kssim::Padding::Valid ? s.h - 10 : s.h,
                       padding == kssim::Padding::Valid ? s.w - 10 : s.w};
        auto map = make_view<C>("map", ms);
        kssim::ssim_map(typename C::execution_space(), a, b, map, o);
        for (double v : from_view(map, ms)) ASSERT_LE(v, 1.0) << "level " << level << " noise " << noise;
      }
    }
}

// Near-constant images far from zero: E[x^2] - E[x]^2 cancels catastrophically in float unless the
// statistics are recentred (Recentring.hpp). The reference is float64 on the same (rounded) values.
TYPED_TEST(SSIM2D, NearConstantImagesFarFromZero) {
  const Shape s{1, 2, 1, 21, 25};
  for (double level : {0.5, 100.0, 1000.0}) {
    ReferenceOptions ro;
    auto x = random_image(s, 12, level, level + 1e-2);
    auto y = noisy_copy(x, 13, 1e-3);
    // Values are rounded to T first, so the float case sees genuinely near-constant float data.
    expect_forward_matches_reference<TypeParam, 4>(s, ro, x, y, to_options(ro));
  }
}

TYPED_TEST(SSIM2D, BitwiseDeterministicAcrossRuns) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 45, 67};
  const auto x = random_image(s, 14);
  auto a = to_view<C>("a", s, x);
  auto b = to_view<C>("b", s, noisy_copy(x, 15, 0.1));
  typename C::execution_space exec;
  const Shape ms{2, 3, 1, 35, 57};
  auto m1 = make_view<C>("m1", ms), m2 = make_view<C>("m2", ms);
  auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
  const double first = kssim::ssim_grad(exec, a, b, g1, {}, {});
  kssim::ssim_map(exec, a, b, m1);
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(kssim::ssim_grad(exec, a, b, g2, {}, {}), first);
    kssim::ssim_map(exec, a, b, m2);
    EXPECT_EQ(from_view(m1, ms), from_view(m2, ms));
    EXPECT_EQ(from_view(g1, s), from_view(g2, s));
  }
}

// Tile sizes are fixed; team size and vector length come from the backend or the options. Results must
// not depend on them (beyond the order of the per-team partial sums of the mean).
TYPED_TEST(SSIM2D, IndependentOfTeamSize) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{1, 3, 1, 41, 77};
  const auto x = random_image(s, 16);
  auto a = to_view<C>("a", s, x);
  auto b = to_view<C>("b", s, noisy_copy(x, 17, 0.1));
  typename C::execution_space exec;
  auto g_default = make_view<C>("g", s), g = make_view<C>("g", s);
  const double base = kssim::ssim_grad(exec, a, b, g_default, {}, {});
  const auto base_grad = from_view(g_default, s);
  int launched = 0;
  for (int team : {1, 2, 3, 4, 8, 16, 32}) {
    for (int vector : {0, 1, 4, 16, 32}) {
      kssim::Options o;
      o.team_size = team;
      o.vector_length = vector;
      double v = 0;
      try {
        v = kssim::ssim_grad(exec, a, b, g, {}, o);
      } catch (const std::invalid_argument&) {
        continue;  // the backend cannot run this shape: refused with a clear error, not a crash
      }
      ++launched;
      SCOPED_TRACE("team_size " + std::to_string(team) + " vector_length " + std::to_string(vector));
      EXPECT_NEAR(v, base, 1e-3 * value_tolerance<T>() + 1e-15);
      EXPECT_LE(relative_l2_error(from_view(g, s), base_grad), 1e-6 * gradient_tolerance<T>());
    }
  }
  const int concurrency = exec.concurrency();
  EXPECT_GE(launched, concurrency > 1 ? 2 : 1);
}

// A rank-2 View is one image: the bits of the same memory as a (1, 1, H, W) batch, for every metric.
TYPED_TEST(SSIM2D, RankTwoViewsAreOneImage) {
  expect_single_views_match_a_batch_of_one<TypeParam, 2>(Shape{1, 1, 1, 23, 30}, 300);
}
