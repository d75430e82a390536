// kssim::SSIM, the training-loop object: same numbers as the one-call functions, accumulation and
// upstream factors, and no allocation or host synchronisation per step once constructed.
#include "TestingUtilities.hpp"

using namespace kssim_test;

template <class C>
class Training : public ::testing::Test {};
TYPED_TEST_SUITE(Training, AllConfigs, ConfigNames);

TYPED_TEST(Training, ForwardBackwardMatchesOneCallFunctions) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s{2, 3, 1, 29, 31};
  const auto x = random_image(s, 80);
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, noisy_copy(x, 81, 0.1));
  Exec exec;
  for (auto which : {kssim::Gradients::Image1, kssim::Gradients::Image2, kssim::Gradients::Both}) {
    kssim::SSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w}, {}, which);
    auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s), r1 = make_view<C>("r1", s), r2 = make_view<C>("r2", s);
    const bool want1 = which != kssim::Gradients::Image2, want2 = which != kssim::Gradients::Image1;
    const double expected = kssim::ssim_grad(exec, a, b, want1 ? r1 : decltype(r1){}, want2 ? r2 : decltype(r2){});
    loss.forward(a, b);
    loss.backward(want1 ? g1 : decltype(g1){}, want2 ? g2 : decltype(g2){});
    EXPECT_EQ(loss.value_on_host(), expected);
    if (want1) EXPECT_EQ(from_view(g1, s), from_view(r1, s));
    if (want2) EXPECT_EQ(from_view(g2, s), from_view(r2, s));
  }
}

// slice_sums(): the map summed over each (n, c) slice (the PyTorch binding's per-image means come from it).
TYPED_TEST(Training, SliceSumsAreTheMapSummedPerChannel) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s{2, 3, 1, 23, 26};
  const auto x = rounded<T>(random_image(s, 90)), y = rounded<T>(noisy_copy(x, 91, 0.2));
  const ReferenceResult ref = reference_ssim(s, x, y, ReferenceOptions{}, false);
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, y);
  Exec exec;
  kssim::SSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w});
  loss.forward(a, b);
  const auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loss.slice_sums());
  ASSERT_EQ(int(sums.extent(0)), s.n * s.c);
  const double pixels = double(s.h - 10) * (s.w - 10);  // valid map of an 11-tap window
  for (int i = 0; i < s.n * s.c; ++i) EXPECT_NEAR(sums(i) / pixels, ref.per_channel[i], value_tolerance<T>());
}

TYPED_TEST(Training, AccumulatesWithHostAndDeviceUpstreamFactors) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s{1, 3, 1, 24, 26};
  const auto x = random_image(s, 82);
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, noisy_copy(x, 83, 0.1));
  Exec exec;
  auto reference = make_view<C>("ref", s);
  kssim::ssim_grad(exec, a, b, reference, {});
  const auto ref = from_view(reference, s);

  kssim::SSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w});
  loss.forward(a, b);
  // Start from an existing gradient (as from an L1 term), add -0.2 * dSSIM, then 0.5 * dSSIM from a device factor.
  const auto start = random_image(s, 84);
  auto g = to_view<C>("g", s, start);
  loss.backward(g, {}, kssim::Accumulate::Yes, -0.2);
  const auto upstream = device_scalar<C>(0.5);
  loss.backward(upstream, g, {}, kssim::Accumulate::Yes);
  const auto got = from_view(g, s);
  std::vector<double> want(s.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = double(T(start[i])) + (-0.2 + 0.5) * ref[i];
  EXPECT_LE(relative_l2_error(got, want), 10 * gradient_tolerance<T>());

  loss.backward(upstream, g);  // overwrite
  std::vector<double> half(ref);
  for (double& v : half) v *= 0.5;
  EXPECT_LE(relative_l2_error(from_view(g, s), half), gradient_tolerance<T>());
}

namespace {
int allocations = 0, fences = 0;
std::string seen;  // labels of what was counted, for the failure message
// Zero-byte records are not memory: Kokkos 4.6's CUDA backend registers an empty team-scratch record
// on every TeamPolicy launch that asks for no level-1 scratch.
void count_allocation(Kokkos::Profiling::SpaceHandle, const char* label, const void*, uint64_t size) {
  if (size == 0) return;
  ++allocations;
  seen += std::string(" alloc:") + label;
}
void count_fence(const char* name, uint32_t, uint64_t* id) {
  ++fences;
  seen += std::string(" fence:") + name;
  *id = 0;
}
}  // namespace

TYPED_TEST(Training, StepsAllocateNothingAndNeverSynchronise) {
  using C = TypeParam;
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  const Shape s{2, 3, 1, 40, 44};
  const auto x = random_image(s, 85);
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, noisy_copy(x, 86, 0.1));
  auto g = make_view<C>("g", s);
  Exec exec;
  kssim::SSIM<Exec, T> loss(exec, {s.n, s.c, s.h, s.w});
  loss.forward(a, b);  // warm-up: first launches may set up backend state
  loss.backward(g);
  exec.fence();

#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = false;  // it allocates and fences by design (Launch.hpp)
#endif
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  Kokkos::Tools::Experimental::set_begin_fence_callback(count_fence);
  allocations = fences = 0;
  seen.clear();
  for (int step = 0; step < 5; ++step) {
    loss.forward(a, b);
    loss.backward(g, {}, kssim::Accumulate::Yes, 0.1);
  }
  const int step_allocations = allocations, step_fences = fences;
  const std::string step_events = seen;
  // The counters work: an allocation and a fence are seen.
  { Kokkos::View<T*, typename C::memory_space> probe("probe", 4); }
  exec.fence();
  const int probe_allocations = allocations - step_allocations, probe_fences = fences - step_fences;
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = true;
#endif

  EXPECT_EQ(step_allocations, 0) << step_events;
  EXPECT_EQ(step_fences, 0) << step_events;
  EXPECT_GE(probe_allocations, 1);
  EXPECT_GE(probe_fences, 1);
}

// The one-call functions keep their workspace between calls of one shape (impl/PlanCache.hpp): after the
// first call, a loop of them allocates nothing, and the device-result form does not synchronise.
TYPED_TEST(Training, OneCallFunctionsReuseTheirWorkspace) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  const Shape s{1, 2, 1, 33, 41};
  const auto x = random_image(s, 95);
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, noisy_copy(x, 96, 0.1));
  auto g = make_view<C>("g", s);
  Kokkos::View<double, typename C::memory_space> mean("mean");
  Exec exec;
  kssim::free_workspaces();
  kssim::ssim(exec, a, b, mean);  // first calls: build and keep the workspaces
  const double first = kssim::ssim_grad(exec, a, b, g);
  exec.fence();

#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = false;  // it allocates and fences by design (Launch.hpp)
#endif
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  Kokkos::Tools::Experimental::set_begin_fence_callback(count_fence);
  allocations = fences = 0;
  seen.clear();
  for (int call = 0; call < 5; ++call) kssim::ssim(exec, a, b, mean);
  const int async_allocations = allocations, async_fences = fences;
  const std::string async_events = seen;
  double again = 0;
  for (int call = 0; call < 3; ++call) again = kssim::ssim_grad(exec, a, b, g);
  const int grad_allocations = allocations - async_allocations;
  kssim::free_workspaces();
  kssim::ssim(exec, a, b, mean);  // after free_workspaces: a new workspace
  const int after_free = allocations - async_allocations - grad_allocations;
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = true;
#endif

  EXPECT_EQ(async_allocations, 0) << async_events;
  EXPECT_EQ(async_fences, 0) << async_events;
  EXPECT_EQ(grad_allocations, 0);
  EXPECT_GE(after_free, 1);
  EXPECT_EQ(again, first);  // the reused workspace gives the same bits
}
