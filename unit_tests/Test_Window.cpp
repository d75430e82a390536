// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim::Window::Float32: the window of fused-ssim and of the PyTorch SSIM references (pytorch-msssim, the 3D
// Gaussian Splatting loss), with their raw moments, against the float64 reference written from that
// definition (ReferenceSSIM.hpp), for every schedule, both paddings, 2D and 3D, values and gradients.
#include "SSIMChecks.hpp"

#include <kssim/MaskedSSIM.hpp>
#include <kssim/impl/core/GaussianWindow.hpp>

#include <cstring>

using namespace kssim_test;

namespace {

// fused-ssim 0ac916a's hard-coded weights (ssim.cu, cGauss): a fact about the peer, copied as numbers.
constexpr float fused_ssim_weights[11] = {0.001028380123898387f, 0.0075987582094967365f, 0.036000773310661316f,
                                          0.10936068743467331f,  0.21300552785396576f,   0.26601171493530273f,
                                          0.21300552785396576f,  0.10936068743467331f,   0.036000773310661316f,
                                          0.0075987582094967365f, 0.001028380123898387f};

}  // namespace

TEST(Window, Float32IsFusedSsimsWindowBitForBit) {
  float w[11];
  kssim::impl::float32_window_weights(11, 1.5, w);
  double sum = 0;
  for (int t = 0; t < 11; ++t) {
    EXPECT_EQ(std::memcmp(&w[t], &fused_ssim_weights[t], sizeof(float)), 0) << "tap " << t;
    sum += w[t];
  }
  EXPECT_NEAR(sum, 1 - 3.12e-8, 1e-10);  // the property that moves SSIM
  // The kernels blur with the normalised weights; the map takes the raw window's sum, over both axes.
  const auto g = kssim::impl::make_gaussian_window<double>(11, 1.5, kssim::Window::Float32, 2);
  double normalised = 0;
  for (int t = 0; t < 11; ++t) normalised += g.weight[t];
  EXPECT_NEAR(normalised, 1, 1e-15);
  // (pow and products may differ by an ulp across compilers and optimisation levels: 1e-15 absolute)
  EXPECT_NEAR(g.raw_scale, sum * sum, 1e-15);
  EXPECT_NEAR(g.raw_deficit, 1 - sum * sum, 1e-15);
  const auto v = kssim::impl::make_gaussian_window<double>(11, 1.5, kssim::Window::Float32, 3);
  EXPECT_NEAR(v.raw_deficit, 1 - sum * sum * sum, 1e-15);
  const auto exact = kssim::impl::make_gaussian_window<float>(11, 1.5);
  EXPECT_EQ(exact.raw_scale, 1.0f);
  EXPECT_EQ(exact.raw_deficit, 0.0f);
}

TEST(Window, Float32FollowsItsDefinitionForEveryWindow) {
  for (int size = 3; size <= kssim::max_window_size; size += 2)
    for (double sigma : {0.3, 0.8, 1.5, 2.5, 4.0, 10.0}) {
      float w[kssim::max_window_size];
      kssim::impl::float32_window_weights(size, sigma, w);
      const std::vector<double> want = reference_float32_gaussian(size, sigma);
      for (int t = 0; t < size; ++t) EXPECT_EQ(double(w[t]), want[t]) << "size " << size << " sigma " << sigma;
    }
}

TEST(Window, MaskedSsimRefusesTheFloat32Window) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  kssim::Options o;
  o.window = kssim::Window::Float32;
  EXPECT_THROW((kssim::MaskedSSIM<Exec, float>(Exec(), {1, 1, 20, 20}, kssim::MaskMode::Weights, o)),
               std::invalid_argument);
}

template <class C>
class Float32Window : public ::testing::Test {};
TYPED_TEST_SUITE(Float32Window, AllConfigs, ConfigNames);

TYPED_TEST(Float32Window, ValuesAndGradientsMatchReference2D) {
  const Shape shapes[] = {{2, 3, 1, 37, 53}, {1, 1, 1, 11, 11}, {1, 2, 1, 16, 40}};
  const std::pair<int, double> windows[] = {{11, 1.5}, {7, 1.0}};
  unsigned seed = 900;
  for (const Shape& s : shapes)
    for (auto [window, sigma] : windows)
      for (bool same : {false, true}) {
        if (!same && (s.h < window || s.w < window)) continue;
        ReferenceOptions ro;
        ro.window = window;
        ro.sigma = sigma;
        ro.same = same;
        ro.float32_window = true;
        expect_noisy_pair_matches_reference<TypeParam, 4>(s, ro, seed, 0.2);
      }
}

TYPED_TEST(Float32Window, ValuesAndGradientsMatchReference3D) {
  Shape s{1, 2, 13, 12, 14};
  s.volumetric = true;
  unsigned seed = 950;
  ReferenceOptions float32;
  float32.float32_window = true;
  for_both_paddings(
      [&](const ReferenceOptions& ro) { expect_noisy_pair_matches_reference<TypeParam, 5>(s, ro, seed, 0.2); }, float32);
}

// On uncorrelated noise SSIM is ~C2 / (2 sigma^2) and the window's deficit moves it by ~2e-7 (the cause of
// fused-ssim's test failing against the exact window): the option must move kssim by the reference's amount.
TYPED_TEST(Float32Window, MovesUncorrelatedNoiseAsThePeersDo) {
  using T = typename TypeParam::value_type;
  if constexpr (std::is_same_v<T, double>) {
    using Exec = typename TypeParam::execution_space;
    const Shape s{1, 2, 1, 64, 72};
    const auto x = random_image(s, 990), y = random_image(s, 991);
    Exec exec;
    auto a = to_view<TypeParam, 4>("a", s, x);
    auto b = to_view<TypeParam, 4>("b", s, y);
    for (bool same : {false, true}) {
      ReferenceOptions exact, f32;
      exact.same = f32.same = same;
      f32.float32_window = true;
      const double want = reference_ssim(s, x, y, f32, false).mean - reference_ssim(s, x, y, exact, false).mean;
      const double got = kssim::ssim(exec, a, b, to_options(f32)) - kssim::ssim(exec, a, b, to_options(exact));
      EXPECT_GT(std::abs(want), 5e-8);  // the effect is there to see
      EXPECT_NEAR(got, want, 1e-12) << (same ? "same" : "valid");
    }
  }
}
