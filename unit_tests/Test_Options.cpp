// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad input gets a clear std::invalid_argument naming the problem, never a crash or a wrong answer.
#include "TestingUtilities.hpp"

#include <functional>
#include <limits>
#include <vector>

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

// Every field takes part in ==, and equal options hash alike (plan caches and the bindings key on them).
TEST(Options, EqualityAndHashCoverEveryField) {
  const std::vector<std::function<void(kssim::Options&)>> edits = {
      [](auto& o) { o.window_size = 7; },        [](auto& o) { o.sigma = 1.25; },
      [](auto& o) { o.k1 = 0.02; },              [](auto& o) { o.k2 = 0.05; },
      [](auto& o) { o.data_range = 255; },       [](auto& o) { o.padding = kssim::Padding::Same; },
      [](auto& o) { o.window = kssim::Window::Float32; },
      [](auto& o) { o.schedule = kssim::Schedule::Stages; },
      [](auto& o) { o.team_size = 64; },         [](auto& o) { o.vector_length = 4; },
      [](auto& o) { o.max_workspace_bytes = 1 << 20; }};
  const kssim::Options base;
  const std::hash<kssim::Options> hash;
  EXPECT_TRUE(base == kssim::Options{});
  EXPECT_EQ(hash(base), hash(kssim::Options{}));
  for (std::size_t i = 0; i < edits.size(); ++i) {
    kssim::Options o;
    edits[i](o);
    EXPECT_FALSE(o == base) << "edit " << i;
    EXPECT_NE(hash(o), hash(base)) << "edit " << i;
    kssim::Options copy = o;
    EXPECT_TRUE(copy == o) << "edit " << i;
    EXPECT_EQ(hash(copy), hash(o)) << "edit " << i;
  }
  kssim::MSSSIMOptions ms, ms3;
  ms3.weights = {0.2, 0.3, 0.5};
  EXPECT_TRUE(ms == kssim::MSSSIMOptions{});
  EXPECT_FALSE(ms == ms3);
  EXPECT_NE(std::hash<kssim::MSSSIMOptions>{}(ms), std::hash<kssim::MSSSIMOptions>{}(ms3));
  kssim::L1SSIMLossOptions l1, l1b;
  l1b.l1_weight = 0.5;
  EXPECT_FALSE(l1 == l1b);
  EXPECT_NE(std::hash<kssim::L1SSIMLossOptions>{}(l1), std::hash<kssim::L1SSIMLossOptions>{}(l1b));
  l1b = l1;
  l1b.ssim.sigma = 2;
  EXPECT_FALSE(l1 == l1b);
}

// The map's extents as the metric checks them: valid and same padding, images and volumes, bad input.
TEST(Options, MapExtentsAreTheMapsShape) {
  kssim::Options same;
  same.padding = kssim::Padding::Same;
  const View4 img("img", 2, 3, 20, 31);
  EXPECT_EQ(kssim::map_extents(img), (std::array<int, 4>{2, 3, 10, 21}));
  EXPECT_EQ(kssim::map_extents(img, same), (std::array<int, 4>{2, 3, 20, 31}));
  kssim::Options w7;
  w7.window_size = 7;
  const Kokkos::View<double*****, Kokkos::LayoutLeft, Exec::memory_space> vol("vol", 1, 2, 9, 8, 12);
  EXPECT_EQ(kssim::map_extents(vol, w7), (std::array<int, 5>{1, 2, 3, 2, 6}));
  // A map allocated from them is what ssim_map accepts.
  const auto e = kssim::map_extents(img);
  const View4 map("map", e[0], e[1], e[2], e[3]);
  EXPECT_NO_THROW(kssim::ssim_map(Exec{}, img, img, map));
  EXPECT_NE(error_of([&] { kssim::map_extents(View4("small", 1, 1, 8, 40)); }).find("window_size"), std::string::npos);
  kssim::Options bad;
  bad.sigma = -1;
  EXPECT_NE(error_of([&] { kssim::map_extents(img, bad); }).find("sigma"), std::string::npos);
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
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NE(with([&](auto& o) { o.sigma = inf; }).find("sigma must be a finite number"), std::string::npos);
  EXPECT_NE(with([&](auto& o) { o.data_range = inf; }).find("data_range"), std::string::npos);
  EXPECT_NE(with([&](auto& o) { o.k1 = inf; }).find("k1"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.k2 = std::nan(""); }).find("k2"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.k1 = o.k2 = 0; }).find("cannot both be 0"), std::string::npos);
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
