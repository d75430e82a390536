// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Padding::Reflect and Padding::Replicate (the forward reads past the edges from pixels inside; the backward
// folds those positions' gradients back, BoundaryFold.hpp): every output and both gradients against the float64
// reference, whose windows read the padded image directly, on every schedule the router can pick, for images
// across several tiles, volumes, the smallest extents each mode allows, wide windows, the fused L1 + SSIM loss and
// masked SSIM's map weights; gradients against finite differences; the modes' errors.
#include "SSIMChecks.hpp"

#include <kssim/L1SSIMLoss.hpp>
#include <kssim/MaskedSSIM.hpp>
#include <kssim/MSSSIM.hpp>

#include <stdexcept>

using namespace kssim_test;

template <class C>
class PaddingModes : public ::testing::Test {};
TYPED_TEST_SUITE(PaddingModes, AllConfigs, ConfigNames);

namespace {

constexpr Outside extending_modes[] = {Outside::Reflect, Outside::Replicate};

ReferenceOptions extending(Outside outside, ReferenceOptions ro = {}) {
  ro.same = true;
  ro.outside = outside;
  return ro;
}

}  // namespace

// 150 x 141 spans several host and GPU tiles with partial tiles at the edges; 11 x 6 (reflect's smallest
// height for an 11-tap window is 6) and 1-pixel-high images for replicate read the mirror or the edge from
// every row.
TYPED_TEST(PaddingModes, ImagesMatchReferenceOnEverySchedule) {
  unsigned seed = 3000;
  for (Outside outside : extending_modes) {
    expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{1, 2, 1, 150, 141}, extending(outside), seed, 0.1);
    expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{2, 1, 1, 6, 40}, extending(outside), seed, 0.2);
    expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{1, 3, 1, 23, 6}, extending(outside), seed, 0.2);
  }
  expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{1, 1, 1, 1, 9}, extending(Outside::Replicate), seed, 0.2);
  expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{1, 1, 1, 2, 2}, extending(Outside::Replicate), seed, 0.2);
}

// Narrow and wide windows: a 31-tap window on a 17-row image reflects 15 rows deep from both edges.
TYPED_TEST(PaddingModes, WindowsFromThreeToThirtyOneTaps) {
  unsigned seed = 3100;
  const std::pair<int, double> windows[] = {{3, 0.5}, {7, 1.0}, {31, 5.0}};
  for (Outside outside : extending_modes)
    for (auto [window, sigma] : windows) {
      ReferenceOptions ro = extending(outside, {.window = window, .sigma = sigma});
      expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{1, 2, 1, 17, 45}, ro, seed, 0.15);
    }
}

// Volumes: the depth pass reads past the first and last slices too.
TYPED_TEST(PaddingModes, VolumesMatchReferenceOnEverySchedule) {
  unsigned seed = 3200;
  for (Outside outside : extending_modes) {
    expect_noisy_pair_matches_reference<TypeParam, 5>(Shape{1, 2, 9, 13, 17, true},
                                                      extending(outside, {.window = 7, .sigma = 1.0}), seed, 0.1);
    expect_noisy_pair_matches_reference<TypeParam, 5>(Shape{1, 1, 8, 12, 40, true}, extending(outside), seed, 0.1);
  }
}

// kssim::Window::Float32 (fused-ssim's and torchmetrics' float32 weights, raw moments) with reflection.
TYPED_TEST(PaddingModes, Float32WindowMatchesReference) {
  unsigned seed = 3300;
  ReferenceOptions ro = extending(Outside::Reflect);
  ro.float32_window = true;
  expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{2, 3, 1, 37, 29}, ro, seed, 0.1);
}

// Gradients against central differences of the library's own mean (double: the steps resolve them), pixels at
// the corners, edges and inside.
TYPED_TEST(PaddingModes, GradientsMatchFiniteDifferences) {
  using T = typename TypeParam::value_type;
  if constexpr (std::is_same_v<T, double>) {
    typename TypeParam::execution_space exec;
    const Shape s{1, 1, 1, 9, 10};
    for (Outside outside : extending_modes) {
      const ReferenceOptions ro = extending(outside, {.window = 5, .sigma = 1.0});
      const kssim::Options opts = to_options(ro);
      auto x = random_image(s, 3400, 0, 1);
      const auto y = noisy_copy(x, 3401, 0.2);
      const auto b = to_view<TypeParam, 4>("b", s, y);
      auto a = to_view<TypeParam, 4>("a", s, x);
      auto g1 = make_view<TypeParam, 4>("g1", s);
      kssim::ssim_grad(exec, a, b, g1, {}, opts);
      const auto grad = from_view(g1, s);
      const double step = 1e-6;
      for (int h : {0, 1, 2, 4, 7, 8})
        for (int w : {0, 1, 3, 8, 9}) {
          const std::size_t q = s.index(0, 0, 0, h, w);
          auto xp = x, xm = x;
          xp[q] += step;
          xm[q] -= step;
          const double fp = kssim::ssim(exec, to_view<TypeParam, 4>("p", s, xp), b, opts);
          const double fm = kssim::ssim(exec, to_view<TypeParam, 4>("m", s, xm), b, opts);
          EXPECT_NEAR(grad[q], (fp - fm) / (2 * step), 1e-7) << "pixel (" << h << ", " << w << ")";
        }
    }
  }
}

namespace {

// For both extending modes: value = call(a, b, g1, g2, options) against `sign` times the reference's SSIM (plus 1
// for a loss, sign -1) and the gradients against `sign` times the reference's.
template <class C, class Call>
void expect_signed_ssim(const Shape& s, unsigned seed, double sign, const Call& call) {
  using T = typename C::value_type;
  for (Outside outside : extending_modes) {
    const ReferenceOptions ro = extending(outside);
    const auto x = rounded<T>(random_image(s, seed, 0, 1)), y = rounded<T>(noisy_copy(x, seed + 1, 0.1));
    ReferenceResult ref = reference_ssim(s, x, y, ro, true);
    const auto a = to_view<C, 4>("a", s, x), b = to_view<C, 4>("b", s, y);
    auto g1 = make_view<C, 4>("g1", s);
    auto g2 = make_view<C, 4>("g2", s);
    const double v = call(a, b, g1, g2, to_options(ro));
    EXPECT_NEAR(v, sign > 0 ? ref.mean : 1 - ref.mean, value_tolerance<T>());
    for (auto* grad : {&ref.grad1, &ref.grad2})
      for (double& e : *grad) e *= sign;
    EXPECT_LE(relative_l2_error(from_view(g1, s), ref.grad1), gradient_tolerance<T>());
    EXPECT_LE(relative_l2_error(from_view(g2, s), ref.grad2), gradient_tolerance<T>());
  }
}

}  // namespace

// The fused L1 + SSIM loss takes SSIM's padding: its gradient is the L1 term's plus SSIM's folded one (the L1
// weight 0: loss = 1 - SSIM, its gradient minus SSIM's).
TYPED_TEST(PaddingModes, L1SsimLossFoldsItsSsimGradient) {
  typename TypeParam::execution_space exec;
  expect_signed_ssim<TypeParam>(Shape{1, 2, 1, 21, 30}, 3500, -1, [&](auto a, auto b, auto g1, auto g2, auto o) {
    kssim::L1SSIMLossOptions lo;
    lo.ssim = o;
    lo.l1_weight = 0;
    return kssim::l1_ssim_loss_grad(exec, a, b, g1, g2, lo);
  });
}

// Map weights of all ones weigh every map pixel once: masked SSIM is SSIM, gradients included.
TYPED_TEST(PaddingModes, MaskWeightsOfOneGiveSsim) {
  typename TypeParam::execution_space exec;
  const Shape s{1, 2, 1, 19, 26};
  const auto mask = to_view<TypeParam, 4>("mask", s, std::vector<double>(s.size(), 1.0));
  expect_signed_ssim<TypeParam>(s, 3600, 1, [&](auto a, auto b, auto g1, auto g2, auto o) {
    return kssim::masked_ssim_grad(exec, a, b, mask, kssim::MaskMode::Weights, g1, g2, o);
  });
}

TYPED_TEST(PaddingModes, RejectsWhatTheModesCannotDo) {
  typename TypeParam::execution_space exec;
  kssim::Options reflect;
  reflect.padding = kssim::Padding::Reflect;
  // A mirror image 5 pixels deep needs 6 pixels.
  const Shape thin{1, 1, 1, 5, 20};
  const auto a = to_view<TypeParam, 4>("a", thin, random_image(thin, 1));
  EXPECT_THROW(kssim::ssim(exec, a, a, reflect), std::invalid_argument);
  kssim::Options replicate = reflect;
  replicate.padding = kssim::Padding::Replicate;
  EXPECT_NO_THROW(kssim::ssim(exec, a, a, replicate));
  const Shape ok{1, 1, 1, 12, 12};
  const auto b = to_view<TypeParam, 4>("b", ok, random_image(ok, 2));
  // Normalized statistics renormalise over the pixels inside the image already.
  EXPECT_THROW(kssim::masked_ssim(exec, b, b, b, kssim::MaskMode::Normalized, reflect), std::invalid_argument);
  // MS-SSIM is defined with valid windows.
  kssim::MSSSIMOptions ms;
  ms.ssim = reflect;
  EXPECT_THROW(kssim::validate(ms), std::invalid_argument);
  kssim::Options bad;
  bad.padding = static_cast<kssim::Padding>(7);
  EXPECT_THROW(kssim::validate(bad), std::invalid_argument);
}
