// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Never a silent wrong answer: the first-use self-check (SelfCheck.hpp) passes on every enabled backend
// and reports each injected fault; kernels that did not run leave NaN, not 0 or an old value; results that
// cannot be 0 are not. This test binary is built with KSSIM_VERIFY_LAUNCHES, so every kernel launch of
// every test also checks that all its teams ran (Launch.hpp).
#include "TestingUtilities.hpp"

#include <kssim/impl/ssim/SelfCheck.hpp>

#include <cmath>
#include <string>

using namespace kssim_test;

#if !defined(KSSIM_VERIFY_LAUNCHES)
#error "the unit tests are built with KSSIM_VERIFY_LAUNCHES (unit_tests/CMakeLists.txt)"
#endif

template <class C>
class SelfCheck : public ::testing::Test {};
TYPED_TEST_SUITE(SelfCheck, SpaceAndTypeConfigs, ConfigNames);

TYPED_TEST(SelfCheck, PassesOnThisBackend) {
  using C = TypeParam;
  EXPECT_NO_THROW((kssim::impl::run_self_check<typename C::execution_space, typename C::value_type>(
      typename C::execution_space())));
}

TYPED_TEST(SelfCheck, ReportsEachInjectedFaultWithVersionAndBackend) {
  using C = TypeParam;
  using kssim::impl::SelfCheckFault;
  const std::pair<SelfCheckFault, const char*> faults[] = {
      {SelfCheckFault::FunctorLayout, "laid out differently"},
      {SelfCheckFault::MissingTeams, "teams"},
      {SelfCheckFault::WrongResult, "SSIM of a 1x2x15x21 test pair"}};
  for (auto [fault, words] : faults) {
    SCOPED_TRACE(words);
    try {
      kssim::impl::run_self_check<typename C::execution_space, typename C::value_type>(typename C::execution_space(),
                                                                                         fault);
      ADD_FAILURE() << "the injected fault was not reported";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("self-check failed"), std::string::npos) << what;
      EXPECT_NE(what.find("Kokkos " + kssim::impl::kokkos_version_string()), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("backend ") + C::execution_space::name()), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  }
}

// The mean's arrays read NaN until a map pass writes them, and again once sum_map has consumed them: a
// map pass that did not run gives NaN, never 0 or the previous call's mean.
TYPED_TEST(SelfCheck, MeanIsNaNWhenTheMapPassDidNotRun) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  Exec exec;
  kssim::impl::MapSumStore<typename C::memory_space> sums(exec, 2, 3, 6.0);
  auto mean_now = [&] {
    double m = 0;
    Kokkos::deep_copy(exec, m, sums.mean);
    exec.fence();
    return m;
  };
  kssim::impl::sum_map(exec, sums.arrays);
  EXPECT_TRUE(std::isnan(mean_now())) << "no map pass ever ran";
  auto tiles = Kokkos::create_mirror_view(sums.tile_sums);
  for (int i = 0; i < 6; ++i) tiles(i) = 0.5;
  Kokkos::deep_copy(exec, sums.tile_sums, tiles);
  kssim::impl::sum_map(exec, sums.arrays);
  EXPECT_DOUBLE_EQ(mean_now(), 0.5);
  kssim::impl::sum_map(exec, sums.arrays);
  EXPECT_TRUE(std::isnan(mean_now())) << "the second sum without a map pass in between";
}

// Values and gradients of random, different pairs: never exactly 0, and never the previous call's.
TYPED_TEST(SelfCheck, ResultsAreNeitherZeroNorStale) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  Exec exec;
  const Shape s{2, 3, 1, 24, 31};
  kssim::SSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w}, {}, kssim::Gradients::Both);
  double previous = 0;
  for (unsigned seed : {1u, 2u}) {
    const auto x = random_image(s, seed);
    auto a = to_view<C>("a", s, x);
    auto b = to_view<C>("b", s, noisy_copy(x, seed + 10, 0.2));
    auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
    loss.forward(a, b);
    loss.backward(g1, g2);
    const double v = loss.value_on_host();
    EXPECT_NE(v, 0.0);
    EXPECT_NE(v, previous);
    previous = v;
    for (const auto& g : {g1, g2}) {
      const auto host = from_view(g, s);
      double norm = 0;
      for (double e : host) norm += e * e;
      EXPECT_GT(norm, 0.0);
    }
    Kokkos::View<double**, typename C::memory_space> per_channel("per_channel", s.n, s.c);
    kssim::ssim_per_channel(exec, a, b, per_channel);
    auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
    for (int n = 0; n < s.n; ++n)
      for (int c = 0; c < s.c; ++c) EXPECT_NE(pc(n, c), 0.0) << n << ", " << c;
  }
}
