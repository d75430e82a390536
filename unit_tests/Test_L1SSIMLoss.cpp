// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The fused L1 + SSIM loss (kssim/L1SSIMLoss.hpp): the loss and both gradients against the independent float64
// reference (ReferenceL1SSIMLoss.hpp) on both schedules, odd sizes, both paddings, images and volumes; central
// differences; sign(0) = 0 at equal pixels; the training object (matches the one-call functions,
// accumulates, no allocation and no host synchronisation per step); bitwise repeatability; bad input.
#include "ErrorRecord.hpp"
#include "ReferenceL1SSIMLoss.hpp"
#include "TrainingChecks.hpp"
#include "TestingUtilities.hpp"

using namespace kssim_test;

namespace {

kssim::L1SSIMLossOptions l1_options(const ReferenceOptions& ro, double weight, kssim::Schedule schedule) {
  kssim::L1SSIMLossOptions o;
  o.ssim = to_options(ro);
  o.ssim.schedule = schedule;
  o.l1_weight = weight;
  return o;
}

template <class Exec>
double device_value(const Exec& exec, const Kokkos::View<const double, typename Exec::memory_space>& v) {
  return kssim::impl::host_value(exec, v, "kssim_test: read a value");
}

// Every output of the library against the reference for one input pair, on every schedule the router can pick.
template <class C, int Rank>
void expect_loss_matches_reference(const Shape& s, const ReferenceOptions& ro, double weight,
                                   const std::vector<double>& x, const std::vector<double>& y) {
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  using Mem = typename C::memory_space;
  const auto xr = rounded<T>(x), yr = rounded<T>(y);
  const L1SsimReference ref = reference_l1_ssim(s, xr, yr, ro, weight);
  Exec exec;
  auto a = to_view<C, Rank>("a", s, xr);
  auto b = to_view<C, Rank>("b", s, yr);
  for (const kssim::Schedule schedule : schedules_for<C, Rank>(to_options(ro))) {
    SCOPED_TRACE(describe(s, ro) + " l1_weight " + std::to_string(weight) + " schedule " + kssim::to_string(schedule));
    const auto opts = l1_options(ro, weight, schedule);

    const double loss = kssim::l1_ssim_loss(exec, a, b, opts);
    record_error("value_error", std::abs(loss - ref.loss));
    EXPECT_NEAR(loss, ref.loss, value_tolerance<T>());
    Kokkos::View<double, Mem> on_device("loss");
    kssim::l1_ssim_loss(exec, a, b, on_device, opts);
    EXPECT_EQ(device_value(exec, on_device), loss);  // the same plan, the same bits

    auto g1 = make_view<C, Rank>("g1", s), g2 = make_view<C, Rank>("g2", s);
    // A plan that keeps partial derivatives may tile the sums differently: the same loss up to rounding.
    const double with_gradients = kssim::l1_ssim_loss_grad(exec, a, b, g1, g2, opts);
    EXPECT_NEAR(with_gradients, ref.loss, value_tolerance<T>());
    const double e1 = relative_l2_error(from_view(g1, s), ref.grad1);
    const double e2 = relative_l2_error(from_view(g2, s), ref.grad2);
    record_error("gradient_error", std::max(e1, e2));
    EXPECT_LE(e1, gradient_tolerance<T>());
    EXPECT_LE(e2, gradient_tolerance<T>());
    // One gradient at a time (3 partial planes instead of 4: the same numbers up to rounding).
    auto h2 = make_view<C, Rank>("h2", s);
    kssim::l1_ssim_loss_grad(exec, a, b, decltype(h2){}, h2, opts);
    EXPECT_LE(relative_l2_error(from_view(h2, s), ref.grad2), gradient_tolerance<T>());

    // The training object: the same loss, its SSIM, its L1 sum.
    kssim::L1SSIMLoss<Exec, T, Rank> object(exec, object_extents<Rank>(s), opts, kssim::Gradients::Both);
    object.forward(a, b);
    EXPECT_EQ(object.value_on_host(), with_gradients);  // the same plan shape: the same bits
    EXPECT_NEAR(device_value(exec, object.ssim_value()), ref.ssim, value_tolerance<T>());
    EXPECT_NEAR(device_value(exec, object.l1_sum()) / double(s.size()), ref.l1_mean, value_tolerance<T>());
  }
}

}  // namespace

template <class C>
class L1Ssim : public ::testing::Test {};
TYPED_TEST_SUITE(L1Ssim, AllConfigs, ConfigNames);

// 3DGS's loss (a = 0.8, same padding, window 11) and other weights, windows and ranges; odd sizes that leave
// partial tiles in both schedules.
TYPED_TEST(L1Ssim, MatchesReferenceForImages) {
  struct Case {
    Shape s;
    bool same;
    int window;
    double weight, range;
  };
  const Case cases[] = {
      {{2, 3, 1, 37, 45}, true, 11, 0.8, 1.0},
      {{1, 2, 1, 29, 71}, false, 11, 0.8, 1.0},
      {{1, 1, 1, 13, 20}, true, 5, 0.3, 255.0},
      {{2, 1, 1, 70, 9}, false, 7, 1.0, 1.0},   // L1 alone (through the SSIM kernels)
      {{1, 2, 1, 17, 23}, true, 3, 0.0, 1.0},   // SSIM alone: 1 - SSIM
  };
  unsigned seed = 700;
  for (const Case& c : cases) {
    const ReferenceOptions ro{.window = c.window, .data_range = c.range, .same = c.same};
    const auto [x, y] = next_noisy_pair(c.s, seed, c.range, 0.1 * c.range);
    expect_loss_matches_reference<TypeParam, 4>(c.s, ro, c.weight, x, y);
  }
}

TYPED_TEST(L1Ssim, MatchesReferenceForVolumes) {
  Shape s{1, 2, 9, 12, 14};
  s.volumetric = true;
  for (const bool same : {false, true}) {
    ReferenceOptions ro;
    ro.window = 5;
    ro.same = same;
    const auto x = random_image(s, 720 + same);
    expect_loss_matches_reference<TypeParam, 5>(s, ro, 0.8, x, noisy_copy(x, 722 + same, 0.1));
  }
}

// Half the pixels equal in both images (as rendered backgrounds are): their L1 gradient is sign(0) = 0, so
// the gradient there is SSIM's alone, as in the reference.
TYPED_TEST(L1Ssim, EqualPixelsHaveZeroL1Gradient) {
  const Shape s{1, 2, 1, 31, 33};
  const auto x = random_image(s, 730);
  auto y = noisy_copy(x, 731, 0.1);
  for (std::size_t i = 0; i < y.size(); i += 2) y[i] = x[i];
  for_both_paddings([&](const ReferenceOptions& ro) { expect_loss_matches_reference<TypeParam, 4>(s, ro, 0.8, x, y); });
}

TYPED_TEST(L1Ssim, IdenticalImagesGiveExactlyZero) {
  using C = TypeParam;
  const Shape s{2, 1, 1, 34, 41};
  auto a = to_view<C>("a", s, random_image(s, 740));
  auto g1 = make_view<C>("g1", s);
  expect_identical_images_give(kssim::l1_ssim_loss_grad(typename C::execution_space(), a, a, g1), 0.0, s,
                               std::is_same_v<typename C::value_type, float> ? 1e-6 : 1e-14, g1);
}

// Central differences of the library's own double loss at random pixels of both images, on both schedules.
TYPED_TEST(L1Ssim, GradientsMatchFiniteDifferences) {
  using C = TypeParam;
  const Shape s{1, 2, 1, 23, 19};
  ReferenceOptions ro;
  ro.window = 7;
  ro.same = true;
  typename C::execution_space exec;
  for (const kssim::Schedule schedule : schedules_for<C, 4>(to_options(ro))) {
    const auto opts = l1_options(ro, 0.8, schedule);
    SCOPED_TRACE(std::string("schedule ") + kssim::to_string(schedule));
    // h: |x - y| is smooth within h of these random pixels (differences ~0.2).
    expect_finite_differences_in_double<C>(
        s, 750,
        [&](const auto& a, const auto& b, auto& g1, auto& g2) { kssim::l1_ssim_loss_grad(exec, a, b, g1, g2, opts); },
        [&](const auto& a, const auto& b) { return kssim::l1_ssim_loss(exec, a, b, opts); }, 1e-6, 1e-9, 8, 752);
  }
}

TYPED_TEST(L1Ssim, TrainingObjectMatchesOneCallFunctionsAndAccumulates) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 36, 37};
  const kssim::L1SSIMLossOptions opts;  // 3DGS's
  const auto in = noisy_views<C>(s, 760, 0.1);
  typename C::execution_space exec;
  const auto make = training_object<kssim::L1SSIMLoss, C>(s, opts);
  const auto forward = forward_on(in);
  const auto one_call = [&](const auto& g1, const auto& g2) {
    return kssim::l1_ssim_loss_grad(exec, in.a, in.b, g1, g2, opts);
  };
  expect_training_object_agrees_with_one_call_function<C>(s, make, forward, one_call, 762);
}

// forward_into() writes the loss as float, from the fused forward's last team, from sum_map after it, and
// from the stage schedule's sum_map.
TYPED_TEST(L1Ssim, ForwardIntoWritesTheLossAsFloat) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 38, 35};
  const auto in = noisy_views<C>(s, 764, 0.1);
  for (const kssim::Schedule schedule : {kssim::Schedule::Stages, kssim::Schedule::Fused})
    for (const char* finish : {"0", "1"}) {
      SCOPED_TRACE(kssim::to_string(schedule) + std::string(" finish=") + finish);
      const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_FINISH", finish);
      kssim::L1SSIMLossOptions opts;
      opts.ssim.schedule = schedule;
      expect_forward_into_writes_the_value_as_float<C>(
          training_object<kssim::L1SSIMLoss, C>(s, opts),
          [&](auto& loss, float* value) { loss.forward_into(in.a, in.b, value); });
    }
}

TYPED_TEST(L1Ssim, TrainingStepsAllocateNothingAndNeverSynchronise) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 40, 44};
  const auto in = noisy_views<C>(s, 770, 0.1);
  expect_training_steps_allocate_nothing_and_never_synchronise<C>(
      s, training_object<kssim::L1SSIMLoss, C>(s, kssim::L1SSIMLossOptions{}), forward_on(in));
  // The one-call form that leaves its result on the device, after its first call, too.
  typename C::execution_space exec;
  Kokkos::View<double, typename C::memory_space> out("loss");
  kssim::l1_ssim_loss(exec, in.a, in.b, out);
  exec.fence();
  expect_steps_allocate_nothing_and_never_synchronise<typename C::memory_space>(exec, [&] {
    for (int call = 0; call < 3; ++call) kssim::l1_ssim_loss(exec, in.a, in.b, out);
  });
}

// Same inputs, same bits: the L1 sums are reduced in a fixed order like SSIM's (Reduction.hpp).
TYPED_TEST(L1Ssim, RepeatedCallsGiveIdenticalBits) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 67, 90};
  const auto in = noisy_views<C>(s, 780, 0.1);
  typename C::execution_space exec;
  for (const kssim::Schedule schedule : schedules_for<C, 4>(kssim::L1SSIMLossOptions{}.ssim)) {
    kssim::L1SSIMLossOptions o;
    o.ssim.schedule = schedule;
    const double first = kssim::l1_ssim_loss(exec, in.a, in.b, o);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(kssim::l1_ssim_loss(exec, in.a, in.b, o), first);
  }
}

TYPED_TEST(L1Ssim, RejectsBadWeightsWithInvalidArgument) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  Exec exec;
  const Shape s{1, 1, 1, 16, 16};
  auto a = make_view<C>("a", s), b = make_view<C>("b", s);
  for (const double w : {-0.1, 1.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    kssim::L1SSIMLossOptions o;
    o.l1_weight = w;
    try {
      kssim::l1_ssim_loss(exec, a, b, o);
      ADD_FAILURE() << "no exception for l1_weight " << w;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("l1_weight"), std::string::npos) << e.what();
    }
    EXPECT_THROW((kssim::L1SSIMLoss<Exec, typename C::value_type>(exec, {1, 1, 16, 16}, o)), std::invalid_argument);
  }
  kssim::L1SSIMLossOptions o;
  o.ssim.window_size = 4;
  EXPECT_THROW(kssim::l1_ssim_loss(exec, a, b, o), std::invalid_argument);
  auto wrong = make_view<C>("wrong", Shape{1, 1, 1, 16, 17});
  EXPECT_THROW(kssim::l1_ssim_loss(exec, a, wrong), std::invalid_argument);
  kssim::L1SSIMLoss<Exec, typename C::value_type> loss(exec, {1, 1, 16, 16});
  EXPECT_THROW(loss.forward(a, wrong), std::invalid_argument);
  auto g = make_view<C>("g", s);
  EXPECT_THROW(loss.backward(g), std::logic_error);  // before any forward()
}
