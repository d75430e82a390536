// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Determinism: kssim uses no atomics and reduces the mean in a fixed order (impl/stages/Reduction.hpp), so the same
// inputs give bitwise-identical results run after run, whatever the OpenMP thread count and the image
// layout. The team size (Options::team_size) changes only the order of the per-team partial sums, so it
// may change the last bits of the means but never the map or the gradients.
#include "TestingUtilities.hpp"

#include <cstring>
#include <limits>
#include <utility>
#include <vector>

using namespace kssim_test;

template <class C>
class Determinism : public ::testing::Test {};
TYPED_TEST_SUITE(Determinism, AllConfigs, ConfigNames);

namespace {

struct Results {
  std::vector<double> means;  // ssim(), ssim(view), ssim_grad(), SSIM::value
  std::vector<double> map, per_image, per_channel, grad1, grad2, object_grad1, object_grad2;
};

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Bitwise comparison of everything except, if `means_too` is false, the means.
void expect_identical(const Results& a, const Results& b, bool means_too = true) {
  if (means_too) {
    EXPECT_TRUE(bitwise_equal(a.means, b.means));
    EXPECT_TRUE(bitwise_equal(a.per_image, b.per_image));
    EXPECT_TRUE(bitwise_equal(a.per_channel, b.per_channel));
  }
  EXPECT_TRUE(bitwise_equal(a.map, b.map));
  EXPECT_TRUE(bitwise_equal(a.grad1, b.grad1));
  EXPECT_TRUE(bitwise_equal(a.grad2, b.grad2));
  EXPECT_TRUE(bitwise_equal(a.object_grad1, b.object_grad1));
  EXPECT_TRUE(bitwise_equal(a.object_grad2, b.object_grad2));
}

template <class C, int Rank, class Exec>
Results run_all(const Exec& exec, const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                const kssim::Options& opts) {
  using T = typename C::value_type;
  using Mem = typename C::memory_space;
  Results r;
  auto a = to_view<C, Rank>("a", s, x);
  auto b = to_view<C, Rank>("b", s, y);
  r.means.push_back(kssim::ssim(exec, a, b, opts));
  Kokkos::View<double, Mem> mean("mean");
  kssim::ssim(exec, a, b, mean, opts);
  double m = 0;
  Kokkos::deep_copy(exec, m, mean);
  exec.fence();
  r.means.push_back(m);

  ReferenceOptions ro;
  ro.window = opts.window_size;
  ro.same = opts.padding == kssim::Padding::Same;
  const Shape ms = reference_map_shape(s, ro);
  auto map = make_view<C, Rank>("map", ms);
  kssim::ssim_map(exec, a, b, map, opts);
  r.map = from_view(map, ms);

  PerSliceMeans slices = per_slice_means(exec, a, b, opts);
  r.per_image = std::move(slices.per_image);
  r.per_channel = std::move(slices.per_channel);

  auto g1 = make_view<C, Rank>("g1", s), g2 = make_view<C, Rank>("g2", s);
  r.means.push_back(kssim::ssim_grad(exec, a, b, g1, g2, opts));
  r.grad1 = from_view(g1, s);
  r.grad2 = from_view(g2, s);

  const std::array<int, Rank> extents = object_extents<Rank>(s);
  kssim::SSIM<Exec, T, Rank> loss(exec, extents, opts, kssim::Gradients::Both);
  loss.forward(a, b);
  loss.backward(g1, g2, kssim::Accumulate::No, -0.5);
  r.means.push_back(loss.value_on_host());
  r.object_grad1 = from_view(g1, s);
  r.object_grad2 = from_view(g2, s);
  return r;
}

struct Problem {
  Shape s;
  kssim::Options opts;
};

std::vector<Problem> problems() {
  std::vector<Problem> p;
  for (bool same : {false, true}) {
    kssim::Options o;
    o.padding = same ? kssim::Padding::Same : kssim::Padding::Valid;
    // More than one tile along W on the host (256 columns) and many teams on every backend.
    p.push_back({Shape{2, 2, 1, 20, 270, false}, o});
    o.window_size = 5;
    p.push_back({Shape{1, 2, 9, 10, 11, true}, o});
  }
  return p;
}

template <class C, class F>
void each_problem(F&& f) {
  for (const Problem& p : problems()) {
    SCOPED_TRACE(describe(p.s, ReferenceOptions{}) + (p.opts.padding == kssim::Padding::Same ? " same" : " valid"));
    const auto x = rounded<typename C::value_type>(random_image(p.s, 9001));
    const auto y = rounded<typename C::value_type>(noisy_copy(x, 9002, 0.1));
    if (p.s.volumetric)
      f.template operator()<5>(p, x, y);
    else
      f.template operator()<4>(p, x, y);
  }
}

}  // namespace

TYPED_TEST(Determinism, RepeatedRunsAreBitwiseIdentical) {
  using C = TypeParam;
  each_problem<C>([]<int Rank>(const Problem& p, const auto& x, const auto& y) {
    typename C::execution_space exec;
    const Results first = run_all<C, Rank>(exec, p.s, x, y, p.opts);
    for (int repeat = 0; repeat < 2; ++repeat) {
      SCOPED_TRACE("repeat " + std::to_string(repeat));
      expect_identical(first, run_all<C, Rank>(exec, p.s, x, y, p.opts));
    }
    // Within one code path the means are the same bits: ssim() and ssim(view) run the forward-only map
    // formula, ssim_grad() and SSIM with gradients the map-and-partials formula. The two formulas are the
    // same expression but separately inlined; with FMA contraction (-march=native) they may differ in the
    // last bits, so across the paths only near-equality is required.
    EXPECT_EQ(first.means[1], first.means[0]);
    EXPECT_EQ(first.means[3], first.means[2]);
    EXPECT_NEAR(first.means[2], first.means[0], 4 * std::numeric_limits<typename C::value_type>::epsilon());
  });
}

TYPED_TEST(Determinism, LayoutDoesNotChangeTheBits) {
  using C = TypeParam;
  using Right = Config<typename C::execution_space, typename C::value_type, Kokkos::LayoutRight>;
  each_problem<C>([]<int Rank>(const Problem& p, const auto& x, const auto& y) {
    typename C::execution_space exec;
    expect_identical(run_all<C, Rank>(exec, p.s, x, y, p.opts), run_all<Right, Rank>(exec, p.s, x, y, p.opts));
  });
}

TYPED_TEST(Determinism, TeamSizeChangesAtMostTheMeansLastBits) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  if constexpr (kssim::impl::is_gpu_space_v<Exec>) {
    GTEST_SKIP() << "team sizes differ per GPU; covered by the host backends";
  } else {
    if (Exec().concurrency() < 2) GTEST_SKIP() << "needs 2 threads";
    each_problem<C>([]<int Rank>(const Problem& p, const auto& x, const auto& y) {
      Exec exec;
      kssim::Options one = p.opts, two = p.opts;
      one.team_size = 1;
      two.team_size = 2;
      const Results a = run_all<C, Rank>(exec, p.s, x, y, one), b = run_all<C, Rank>(exec, p.s, x, y, two);
      expect_identical(a, b, /*means_too=*/false);
      for (std::size_t i = 0; i < a.means.size(); ++i) EXPECT_NEAR(a.means[i], b.means[i], 1e-14);
      // And a given team size is itself reproducible.
      expect_identical(b, run_all<C, Rank>(exec, p.s, x, y, two));
    });
  }
}

#if defined(KOKKOS_ENABLE_OPENMP)
// OpenMP instances with 1, 3 and 4 threads give the same bits as the default instance.
template <class T, class Layout>
void expect_thread_count_independent() {
  using C = Config<Kokkos::OpenMP, T, Layout>;
  each_problem<C>([]<int Rank>(const Problem& p, const auto& x, const auto& y) {
    const Results base = run_all<C, Rank>(Kokkos::OpenMP(), p.s, x, y, p.opts);
    for (int threads : {1, 3, 4}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      Kokkos::OpenMP exec(threads);
      ASSERT_EQ(exec.concurrency(), threads);
      expect_identical(base, run_all<C, Rank>(exec, p.s, x, y, p.opts));
    }
  });
}

TEST(DeterminismOpenMP, ThreadCountDoesNotChangeTheBits) {
  expect_thread_count_independent<float, Kokkos::LayoutRight>();
  expect_thread_count_independent<double, Kokkos::LayoutLeft>();
}
#endif
