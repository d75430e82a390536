// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad input gets a clear std::invalid_argument naming the problem, never a crash or a wrong answer.
#include "TestingUtilities.hpp"

using namespace kssim_test;
using Exec = Kokkos::DefaultHostExecutionSpace;
using View4 = Kokkos::View<float****, Exec::memory_space>;

namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace

TEST(Options, DefaultsAreTheStandardOnes) {
  const kssim::Options o;
  EXPECT_EQ(o.window_size, 11);
  EXPECT_EQ(o.sigma, 1.5);
  EXPECT_EQ(o.k1, 0.01);
  EXPECT_EQ(o.k2, 0.03);
  EXPECT_EQ(o.data_range, 1.0);
  EXPECT_EQ(o.padding, kssim::Padding::Valid);
  EXPECT_NO_THROW(kssim::validate(o));
}

TEST(Options, RejectsBadWindowSigmaAndRange) {
  auto with = [](auto edit) {
    kssim::Options o;
    edit(o);
    return error_of([&] { kssim::validate(o); });
  };
  EXPECT_NE(with([](auto& o) { o.window_size = 10; }).find("window_size must be odd"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.window_size = 1; }).find("window_size"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.window_size = -3; }).find("window_size"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.window_size = kssim::max_window_size + 2; }).find("window_size"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.sigma = 0; }).find("sigma"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.sigma = std::nan(""); }).find("sigma"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.data_range = -1; }).find("data_range"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.k1 = -0.1; }).find("k1"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.vector_length = 3; }).find("power of two"), std::string::npos);
}

TEST(Options, RejectsMismatchedAndTooSmallImages) {
  Exec exec;
  View4 a("a", 1, 3, 20, 20), b("b", 1, 3, 20, 21), small("s", 1, 3, 10, 30), g("g", 1, 3, 20, 19);
  EXPECT_NE(error_of([&] { kssim::ssim(exec, a, b); }).find("same extents, got (1, 3, 20, 20) and (1, 3, 20, 21)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { kssim::ssim(exec, small, small); }).find("must be >= window_size 11"), std::string::npos);
  kssim::Options same;
  same.padding = kssim::Padding::Same;
  EXPECT_NO_THROW(kssim::ssim(exec, small, small, same));  // same padding has no minimum size
  EXPECT_NE(error_of([&] { kssim::ssim_grad(exec, a, a, g, {}); }).find("grad1 has extents (1, 3, 20, 19)"),
            std::string::npos);
  View4 wrong_map("m", 1, 3, 20, 20);
  EXPECT_NE(error_of([&] { kssim::ssim_map(exec, a, a, wrong_map); }).find("expected (1, 3, 10, 10)"),
            std::string::npos);
  Kokkos::View<double*, Exec::memory_space> per_image("p", 2);
  EXPECT_NE(error_of([&] { kssim::ssim_per_image(exec, a, a, per_image); }).find("per_image"), std::string::npos);
  View4 empty("e", 0, 3, 20, 20);
  EXPECT_NE(error_of([&] { kssim::ssim(exec, empty, empty); }).find("empty"), std::string::npos);
}

TEST(Options, TrainingObjectChecksItsShapeAndOrder) {
  Exec exec;
  kssim::SSIM<Exec, float> loss(exec, {1, 1, 16, 16});
  View4 a("a", 1, 1, 16, 16), wrong("w", 1, 1, 16, 17);
  EXPECT_NE(error_of([&] { loss.forward(a, wrong); }).find("img2 has extents (1, 1, 16, 17)"), std::string::npos);
  EXPECT_THROW(loss.backward(a), std::logic_error);  // backward before forward
  kssim::SSIM<Exec, float> no_grad(exec, {1, 1, 16, 16}, {}, kssim::Gradients::None);
  no_grad.forward(a, a);
  EXPECT_NE(error_of([&] { no_grad.backward(a); }).find("not set up"), std::string::npos);
  EXPECT_THROW((kssim::SSIM<Exec, float>(exec, {1, 1, 8, 8})), std::invalid_argument);
}
