// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 3D SSIM of volumes (N, C, D, H, W): values and gradients against the float64 reference, which
// correlates with the full 3D Gaussian directly.
#include "SSIMChecks.hpp"
#include "SingleImageChecks.hpp"

using namespace kssim_test;

template <class C>
class SSIM3D : public ::testing::Test {};
TYPED_TEST_SUITE(SSIM3D, AllConfigs, ConfigNames);

namespace {
Shape volume(int n, int c, int d, int h, int w) { return Shape{n, c, d, h, w, true}; }
}  // namespace

TYPED_TEST(SSIM3D, MinimalValidVolume) {
  const Shape s = volume(1, 1, 11, 11, 11);
  unsigned seed = 200;
  expect_noisy_pair_matches_reference<TypeParam, 5>(s, ReferenceOptions{}, seed, 0.1);
}

TYPED_TEST(SSIM3D, OddDistinctExtentsBothPaddings) {
  const Shape s = volume(1, 2, 13, 15, 17);
  unsigned seed = 210;
  for_both_paddings(
      [&](const ReferenceOptions& ro) { expect_noisy_pair_matches_reference<TypeParam, 5>(s, ro, seed, 0.15); });
}

TYPED_TEST(SSIM3D, BatchesChannelsAndSmallWindows) {
  const Shape s = volume(2, 3, 9, 12, 10);
  unsigned seed = 220;
  ReferenceOptions base;
  base.window = 5;
  base.sigma = 1.0;
  base.data_range = 255;
  for_both_paddings(
      [&](const ReferenceOptions& ro) { expect_noisy_pair_matches_reference<TypeParam, 5>(s, ro, seed, 20, 255); }, base);
}

TYPED_TEST(SSIM3D, TrainingObjectMatchesOneCallFunctions) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s = volume(1, 2, 12, 14, 13);
  const auto in = noisy_views<C, 5>(s, 230, 0.1);
  auto g = make_view<C, 5>("g", s), r = make_view<C, 5>("r", s);
  Exec exec;
  kssim::Options o;
  o.window_size = 7;
  const double expected = kssim::ssim_grad(exec, in.a, in.b, r, {}, o);
  kssim::SSIM<Exec, T, 5> loss(exec, {s.n, s.c, s.d, s.h, s.w}, o);
  loss.forward(in.a, in.b);
  loss.backward(g);
  EXPECT_EQ(loss.value_on_host(), expected);
  EXPECT_EQ(from_view(g, s), from_view(r, s));
}

TYPED_TEST(SSIM3D, RejectsVolumesThinnerThanTheWindow) {
  using C = TypeParam;
  auto a = make_view<C, 5>("a", volume(1, 1, 10, 20, 20));
  EXPECT_THROW(kssim::ssim(typename C::execution_space(), a, a), std::invalid_argument);
  kssim::Options same;
  same.padding = kssim::Padding::Same;
  EXPECT_NO_THROW(kssim::ssim(typename C::execution_space(), a, a, same));
}

// Identical volumes give exactly 1 (the depth pass combines moments like the column pass).
TYPED_TEST(SSIM3D, IdenticalVolumesGiveExactlyOne) {
  using C = TypeParam;
  const Shape s{1, 2, 13, 12, 14};
  const auto x = rounded<typename C::value_type>(random_image(s, 77, 10, 12));
  auto a = to_view<C, 5>("a", s, x), b = to_view<C, 5>("b", s, x);
  for (auto padding : {kssim::Padding::Valid, kssim::Padding::Same}) {
    kssim::Options o;
    o.padding = padding;
    o.window_size = 7;
    EXPECT_EQ(kssim::ssim(typename C::execution_space(), a, b, o), 1.0) << kssim::to_string(padding);
  }
}

// A rank-3 View is one volume: the bits of the same memory as a (1, 1, D, H, W) batch, for every metric.
TYPED_TEST(SSIM3D, RankThreeViewsAreOneVolume) {
  expect_single_views_match_a_batch_of_one<TypeParam, 3>(volume(1, 1, 12, 14, 13), 310);
}
