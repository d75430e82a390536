// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Problems split into pieces (include/kssim/impl/ssim/Slabs.hpp): groups of images, groups of channels, and
// slabs along the outermost spatial axis (D for volumes, H for images), forced by small workspace budgets.
// Every output against the float64 reference, with every schedule (each with budgets from its own
// workspace); against the unsplit problem (groups of slices: bitwise; slabs: to rounding); the training
// object with its recomputed backward, Accumulate::Yes and a device upstream factor; and budgets too small
// for one row.
#include "SSIMChecks.hpp"
#include "SlabBudgets.hpp"

#include <kssim/impl/ssim/Slabs.hpp>

using namespace kssim_test;

template <class C>
class Slabs : public ::testing::Test {};
TYPED_TEST_SUITE(Slabs, AllConfigs, ConfigNames);

namespace {

// Every schedule the router can pick, each with budgets from its own workspace.
template <class C, int Rank>
void expect_split_matches(const Shape& s, const ReferenceOptions& ro, unsigned seed, int rows) {
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const auto x = random_image(s, seed), y = noisy_copy(x, seed + 1, 0.15);
  const auto xr = rounded<T>(x), yr = rounded<T>(y);
  const ReferenceResult ref = reference_ssim(s, xr, yr, ro, true);
  Exec exec;
  auto a = to_view<C, Rank>("a", s, xr), b = to_view<C, Rank>("b", s, yr);
  for (const kssim::Schedule schedule : schedules_for<C, Rank>(to_options(ro))) {
    kssim::Options o = to_options(ro);
    o.schedule = schedule;
    for (const auto& [level, budget] : budgets<C, Rank>(s, o, rows, {true, true})) {
      SCOPED_TRACE(describe(s, ro) + ", schedule " + kssim::to_string(schedule) + ", split into " + level +
                   ", budget " + std::to_string(budget));
      kssim::Options split = o;
      split.max_workspace_bytes = budget;
      // The split happens: a test of the split must not pass by running the problem whole.
      kssim::SSIM<Exec, T, Rank> probe(exec, object_extents<Rank>(s), split, kssim::Gradients::Both);
      ASSERT_GT(probe.pieces(), 1);
      ASSERT_LE(probe.workspace_bytes(), budget);
      expect_forward_outputs<C, Rank>(s, ref, a, b, split);
      expect_gradient_outputs<C, Rank>(s, ref, a, b, split);

      // Against the problem run whole: bitwise for groups of slices, to rounding for slabs.
      auto g1 = make_view<C, Rank>("g1", s), g2 = make_view<C, Rank>("g2", s);
      auto w1 = make_view<C, Rank>("w1", s), w2 = make_view<C, Rank>("w2", s);
      const double whole = kssim::ssim_grad(exec, a, b, w1, w2, o);
      const double sliced = kssim::ssim_grad(exec, a, b, g1, g2, split);
      if (level != "slabs") {
        EXPECT_EQ(sliced, whole);
        EXPECT_EQ(from_view(g1, s), from_view(w1, s));
        EXPECT_EQ(from_view(g2, s), from_view(w2, s));
      } else {
        EXPECT_NEAR(sliced, whole, value_tolerance<T>());
        EXPECT_LE(relative_l2_error(from_view(g1, s), from_view(w1, s)), gradient_tolerance<T>());
        EXPECT_LE(relative_l2_error(from_view(g2, s), from_view(w2, s)), gradient_tolerance<T>());
      }

      // The training object: forward, a recomputed backward, accumulation and a device upstream factor.
      kssim::SSIM<Exec, T, Rank> loss(exec, object_extents<Rank>(s), split, kssim::Gradients::Both);
      auto map = make_view<C, Rank>("map", ref.map_shape);
      loss.forward(a, b, map);
      EXPECT_NEAR(loss.value_on_host(), whole, value_tolerance<T>());
      EXPECT_LE(max_abs_error(from_view(map, ref.map_shape), ref.map), map_tolerance<T>());
      auto t1 = make_view<C, Rank>("t1", s), t2 = make_view<C, Rank>("t2", s);
      loss.backward(t1, t2);
      EXPECT_LE(relative_l2_error(from_view(t1, s), from_view(w1, s)), gradient_tolerance<T>());
      EXPECT_LE(relative_l2_error(from_view(t2, s), from_view(w2, s)), gradient_tolerance<T>());
      loss.backward(device_scalar<C>(-2.0), t1, {}, kssim::Accumulate::Yes);
      std::vector<double> want = from_view(w1, s);
      for (double& v : want) v = -v;  // g + (-2) g
      EXPECT_LE(relative_l2_error(from_view(t1, s), want), 2 * gradient_tolerance<T>());
    }
  }
}

// expect_split_matches in valid padding (seed), then in same padding (seed + 2).
template <class C, int Rank>
void expect_split_matches_in_both_paddings(const Shape& s, ReferenceOptions ro, unsigned seed, int rows) {
  for (bool same : {false, true}) {
    ro.same = same;
    expect_split_matches<C, Rank>(s, ro, seed, rows);
    seed += 2;
  }
}

}  // namespace

TYPED_TEST(Slabs, ImagesSplitIntoGroupsChannelsAndRows) {
  // 37 rows: uneven slabs
  expect_split_matches_in_both_paddings<TypeParam, 4>(Shape{3, 2, 1, 37, 29, false},
                                                      ReferenceOptions{.window = 7, .sigma = 1.2}, 700, 5);
}

TYPED_TEST(Slabs, VolumesSplitIntoGroupsChannelsAndSlabs) {
  expect_split_matches_in_both_paddings<TypeParam, 5>(Shape{2, 2, 19, 9, 11, true},
                                                      ReferenceOptions{.window = 5, .sigma = 1.0}, 720, 4);
}

// kssim::Window::Float32 (its raw-window map, RawWindow.hpp) in every piece of a split problem too.
TYPED_TEST(Slabs, Float32WindowSplitsLikeTheWhole) {
  expect_split_matches_in_both_paddings<TypeParam, 4>(
      Shape{3, 2, 1, 37, 29, false}, ReferenceOptions{.window = 7, .sigma = 1.2, .float32_window = true}, 760, 5);
}

TYPED_TEST(Slabs, SlabsOfOneRowAndWideWindows) {
  // Slabs of a single map row, and a window wider than a slab's own rows: every row's halo crosses slabs.
  ReferenceOptions ro;
  ro.window = 11;
  unsigned seed = 740;
  for (bool same : {false, true}) {
    ro.same = same;
    expect_split_matches<TypeParam, 4>(Shape{1, 1, 1, 23, 17, false}, ro, seed, 1);
    expect_split_matches<TypeParam, 5>(Shape{1, 1, 14, 12, 13, true}, ro, seed + 1, 2);
    seed += 2;
  }
}

// Reflect and Replicate padding: only the first and last slabs read past the field, and every slab folds the
// gradients of the positions past the field's sides (BoundaryFold.hpp) from its own map rows.
TYPED_TEST(Slabs, ReflectAndReplicateSplitLikeTheWhole) {
  ReferenceOptions reflect{.window = 7, .sigma = 1.2, .same = true, .outside = Outside::Reflect};
  ReferenceOptions replicate = reflect;
  replicate.outside = Outside::Replicate;
  expect_split_matches<TypeParam, 4>(Shape{2, 2, 1, 37, 29, false}, reflect, 780, 5);
  expect_split_matches<TypeParam, 5>(Shape{1, 1, 15, 9, 11, true}, reflect, 781, 4);
  expect_split_matches<TypeParam, 4>(Shape{1, 2, 1, 37, 29, false}, replicate, 782, 5);
  replicate.window = 11;  // one-row slabs: every row's window crosses slabs and reaches past the field
  replicate.sigma = 1.5;
  expect_split_matches<TypeParam, 4>(Shape{1, 1, 1, 23, 17, false}, replicate, 783, 1);
}

TYPED_TEST(Slabs, BudgetTooSmallForOneRowThrows) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  auto a = make_view<C, 4>("a", Shape{1, 1, 1, 40, 40, false});
  kssim::Options o;
  o.max_workspace_bytes = 16;
  EXPECT_THROW(kssim::ssim(Exec(), a, a, o), std::invalid_argument);
  EXPECT_THROW((kssim::SSIM<Exec, typename C::value_type>(Exec(), {1, 1, 40, 40}, o)), std::invalid_argument);
}

TYPED_TEST(Slabs, ProblemsThatFitRunWhole) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  kssim::SSIM<Exec, typename C::value_type> loss(Exec(), {2, 3, 64, 48});
  EXPECT_EQ(loss.pieces(), 1);
}
