// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of the mean SSIM of 2D images with respect to both images: against the float64 reference's
// analytic gradient, and (double) against central finite differences of the library's own value.
#include "SSIMChecks.hpp"
#include "TrainingChecks.hpp"

using namespace kssim_test;

template <class C>
class Gradients2D : public ::testing::Test {};
TYPED_TEST_SUITE(Gradients2D, AllConfigs, ConfigNames);

TYPED_TEST(Gradients2D, MatchReferenceOnNoisyRandomImages) {
  const Shape shapes[] = {{2, 3, 1, 37, 53}, {1, 1, 1, 11, 11}, {1, 7, 1, 16, 40}};
  unsigned seed = 21;
  for (const Shape& s : shapes)
    for_both_paddings([&](const ReferenceOptions& ro) {
      const auto [x, y] = next_noisy_pair(s, seed, 1, 0.1);
      expect_gradients_match_reference<TypeParam, 4>(s, ro, x, y, to_options(ro));
    });
}

TYPED_TEST(Gradients2D, MatchReferenceForOtherWindowsAndRanges) {
  const Shape s{1, 2, 1, 33, 29};
  struct Case {
    int window;
    double sigma, range;
    bool same;
  };
  const Case cases[] = {{3, 0.7, 1, false}, {7, 1.2, 1, true}, {15, 2.0, 255, false}, {31, 4.0, 1, true}};
  unsigned seed = 40;
  for (const Case& c : cases) {
    const ReferenceOptions ro{.window = c.window, .sigma = c.sigma, .data_range = c.range, .same = c.same};
    const auto [x, y] = next_noisy_pair(s, seed, c.range, 0.15 * c.range);
    expect_gradients_match_reference<TypeParam, 4>(s, ro, x, y, to_options(ro));
  }
}

TYPED_TEST(Gradients2D, IdenticalImagesHaveZeroGradient) {
  using C = TypeParam;
  const Shape s{1, 3, 1, 23, 19};
  const auto x = rounded<typename C::value_type>(random_image(s, 50));
  auto a = to_view<C>("a", s, x);
  auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
  // Exactly 1 (MapFormula.hpp), also on the path that computes the partials; SSIM is maximal at x == y, so
  // the gradient vanishes (up to rounding of the value type).
  expect_identical_images_give(kssim::ssim_grad(typename C::execution_space(), a, a, g1, g2), 1.0, s,
                               std::is_same_v<typename C::value_type, float> ? 1e-7 : 1e-15, g1, g2);
}

// Central differences of the library's own double-precision value at random pixels.
TYPED_TEST(Gradients2D, MatchFiniteDifferences) {
  const Shape s{1, 2, 1, 15, 17};
  typename TypeParam::execution_space exec;
  ReferenceOptions window7;
  window7.window = 7;
  for_both_paddings([&](const ReferenceOptions& ro) {
    const kssim::Options o = to_options(ro);
    SCOPED_TRACE(ro.same ? "same" : "valid");
    expect_finite_differences_in_double<TypeParam>(
        s, 60, [&](const auto& a, const auto& b, auto& g1, auto& g2) { kssim::ssim_grad(exec, a, b, g1, g2, o); },
        [&](const auto& a, const auto& b) { return kssim::ssim(exec, a, b, o); }, 1e-5, 1e-10, 12, 62);
  }, window7);
}

TYPED_TEST(Gradients2D, AcceptsStridedSubviews) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape big{2, 3, 1, 30, 40}, s{2, 2, 1, 25, 33};
  const auto xb = rounded<T>(random_image(big, 70)), yb = rounded<T>(noisy_copy(xb, 71, 0.1));
  auto a = to_view<C>("a", big, xb), b = to_view<C>("b", big, yb);
  auto sub = [&](auto v) {
    return Kokkos::subview(v, Kokkos::ALL, std::make_pair(1, 3), std::make_pair(2, 27), std::make_pair(3, 36));
  };
  std::vector<double> x(s.size()), y(s.size());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 25; ++i)
        for (int j = 0; j < 33; ++j) {
          x[s.index(n, c, 0, i, j)] = xb[big.index(n, c + 1, 0, i + 2, j + 3)];
          y[s.index(n, c, 0, i, j)] = yb[big.index(n, c + 1, 0, i + 2, j + 3)];
        }
  ReferenceOptions ro;
  const auto ref = reference_ssim(s, x, y, ro, true);
  auto g1 = make_view<C>("g1", s);
  const double v = kssim::ssim_grad(typename C::execution_space(), sub(a), sub(b), g1, {});
  EXPECT_NEAR(v, ref.mean, value_tolerance<T>());
  EXPECT_LE(relative_l2_error(from_view(g1, s), ref.grad1), gradient_tolerance<T>());
}
