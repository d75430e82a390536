// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim::SSIM, the training-loop object: same numbers as the one-call functions, accumulation and
// upstream factors, and no allocation or host synchronisation per step once constructed.
#include "TrainingChecks.hpp"
#include "TestingUtilities.hpp"

using namespace kssim_test;

template <class C>
class Training : public ::testing::Test {};
TYPED_TEST_SUITE(Training, AllConfigs, ConfigNames);

// make(gradients) for the checks of TrainingChecks.hpp.
template <class C>
auto ssim_object(const Shape& s) {
  using Exec = typename C::execution_space;
  return [s](kssim::Gradients which) {
    return kssim::SSIM<Exec, typename C::value_type>(Exec(), {s.n, s.c, s.h, s.w}, {}, which);
  };
}

// one_call(grad1, grad2) for the checks of TrainingChecks.hpp: kssim::ssim_grad of the images of `in`.
template <class C>
auto ssim_grad_on(const ImagePair<C>& in) {
  return [&in](const auto& g1, const auto& g2) {
    return kssim::ssim_grad(typename C::execution_space(), in.a, in.b, g1, g2);
  };
}

TYPED_TEST(Training, ForwardBackwardMatchesOneCallFunctions) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 29, 31};
  const auto in = noisy_views<C>(s, 80, 0.1);
  expect_training_object_matches_one_call_function<C>(s, ssim_object<C>(s), forward_on(in), ssim_grad_on(in));
}

// slice_sums(): the map summed over each (n, c) slice (the PyTorch binding's per-image means come from it).
TYPED_TEST(Training, SliceSumsAreTheMapSummedPerChannel) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s{2, 3, 1, 23, 26};
  const auto in = rounded_noisy_views<C>(s, 90, 0.2);
  const ReferenceResult ref = reference_ssim(s, in.x, in.y, ReferenceOptions{}, false);
  Exec exec;
  kssim::SSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w});
  loss.forward(in.a, in.b);
  const auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loss.slice_sums());
  ASSERT_EQ(int(sums.extent(0)), s.n * s.c);
  const double pixels = double(s.h - 10) * (s.w - 10);  // valid map of an 11-tap window
  for (int i = 0; i < s.n * s.c; ++i) EXPECT_NEAR(sums(i) / pixels, ref.per_channel[i], value_tolerance<T>());
}

TYPED_TEST(Training, AccumulatesWithHostAndDeviceUpstreamFactors) {
  using C = TypeParam;
  const Shape s{1, 3, 1, 24, 26};
  const auto in = noisy_views<C>(s, 82, 0.1);
  expect_accumulates_with_host_and_device_factors<C>(s, ssim_object<C>(s), forward_on(in), ssim_grad_on(in), 84);
}

// {} skips a gradient in every backward() form, as in ssim_grad: loss.backward({}, g2) and
// loss.backward(upstream, {}, g2) give image 2's gradient of the one-call function, bit for bit.
TYPED_TEST(Training, BracesSkipAGradientInEveryBackwardForm) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  const Shape s{1, 2, 1, 21, 25};
  const auto in = noisy_views<C>(s, 86, 0.1);
  Exec exec;
  auto want = make_view<C>("want", s);
  kssim::ssim_grad(exec, in.a, in.b, {}, want);
  kssim::SSIM<Exec, typename C::value_type> loss(exec, {s.n, s.c, s.h, s.w}, {}, kssim::Gradients::Image2);
  loss.forward(in.a, in.b);
  auto got = make_view<C>("got", s);
  loss.backward({}, got);
  EXPECT_EQ(from_view(got, s), from_view(want, s));
  auto got_device = make_view<C>("got_device", s);
  loss.backward(device_scalar<C>(1.0), {}, got_device);
  EXPECT_EQ(from_view(got_device, s), from_view(want, s));
}

TYPED_TEST(Training, StepsAllocateNothingAndNeverSynchronise) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 40, 44};
  const auto in = noisy_views<C>(s, 85, 0.1);
  expect_training_steps_allocate_nothing_and_never_synchronise<C>(s, ssim_object<C>(s), forward_on(in));
}

// The one-call functions keep their workspace between calls of one shape (impl/ssim/PlanCache.hpp): after the
// first call, a loop of them allocates nothing, and the device-result form does not synchronise.
TYPED_TEST(Training, OneCallFunctionsReuseTheirWorkspace) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  const Shape s{1, 2, 1, 33, 41};
  const auto in = noisy_views<C>(s, 95, 0.1);
  auto g = make_view<C>("g", s);
  Kokkos::View<double, typename C::memory_space> mean("mean");
  Exec exec;
  kssim::free_workspaces();
  kssim::ssim(exec, in.a, in.b, mean);  // first calls: build and keep the workspaces
  const double first = kssim::ssim_grad(exec, in.a, in.b, g);
  exec.fence();

  const StepEvents async = count_step_events<typename C::memory_space>(exec, [&] {
    for (int call = 0; call < 5; ++call) kssim::ssim(exec, in.a, in.b, mean);
  });
  double again = 0;
  const StepEvents grad = count_step_events<typename C::memory_space>(exec, [&] {
    for (int call = 0; call < 3; ++call) again = kssim::ssim_grad(exec, in.a, in.b, g);
  });
  kssim::free_workspaces();
  const StepEvents after_free = count_step_events<typename C::memory_space>(exec, [&] {
    kssim::ssim(exec, in.a, in.b, mean);  // after free_workspaces: a new workspace
  });

  EXPECT_EQ(async.allocations, 0) << async.seen;
  EXPECT_EQ(async.fences, 0) << async.seen;
  EXPECT_EQ(grad.allocations, 0) << grad.seen;
  EXPECT_GE(after_free.allocations, 1);
  EXPECT_GE(async.probe_allocations, 1);
  EXPECT_GE(async.probe_fences, 1);
  EXPECT_EQ(again, first);  // the reused workspace gives the same bits
}

// MS-SSIM's and masked SSIM's one-call functions keep their workspaces too: after the first call of a shape,
// a loop of them allocates nothing, the device-result forms do not synchronise, and the bits repeat.
TYPED_TEST(Training, OneCallMsSsimAndMaskedReuseTheirWorkspace) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  const Shape s{1, 2, 1, 26, 29};
  const auto in = noisy_views<C>(s, 96, 0.1);
  const auto mask = to_view<C>("mask", Shape{1, 1, 1, 26, 29}, random_image(Shape{1, 1, 1, 26, 29}, 97));
  auto g = make_view<C>("g", s);
  Kokkos::View<double, typename C::memory_space> mean("mean");
  kssim::MSSSIMOptions ms;
  ms.ssim.window_size = 5;
  ms.weights = {0.3, 0.3, 0.4};
  Exec exec;
  kssim::free_workspaces();
  kssim::ms_ssim(exec, in.a, in.b, mean, ms);
  const double ms_first = kssim::ms_ssim_grad(exec, in.a, in.b, g, {}, ms);
  kssim::masked_ssim(exec, in.a, in.b, mask, kssim::MaskMode::Normalized, mean);
  const double masked_first = kssim::masked_ssim_grad(exec, in.a, in.b, mask, kssim::MaskMode::Normalized, g);
  exec.fence();

  const StepEvents async = count_step_events<typename C::memory_space>(exec, [&] {
    for (int call = 0; call < 3; ++call) {
      kssim::ms_ssim(exec, in.a, in.b, mean, ms);
      kssim::masked_ssim(exec, in.a, in.b, mask, kssim::MaskMode::Normalized, mean);
    }
  });
  double ms_again = 0, masked_again = 0;
  const StepEvents grad = count_step_events<typename C::memory_space>(exec, [&] {
    ms_again = kssim::ms_ssim_grad(exec, in.a, in.b, g, {}, ms);
    masked_again = kssim::masked_ssim_grad(exec, in.a, in.b, mask, kssim::MaskMode::Normalized, g);
  });
  kssim::free_workspaces();
  const StepEvents after_free = count_step_events<typename C::memory_space>(exec, [&] {
    kssim::ms_ssim(exec, in.a, in.b, mean, ms);  // after free_workspaces: a new workspace
  });

  EXPECT_EQ(async.allocations, 0) << async.seen;
  EXPECT_EQ(async.fences, 0) << async.seen;
  EXPECT_EQ(grad.allocations, 0) << grad.seen;
  EXPECT_GE(after_free.allocations, 1);
  EXPECT_EQ(ms_again, ms_first);
  EXPECT_EQ(masked_again, masked_first);
}
