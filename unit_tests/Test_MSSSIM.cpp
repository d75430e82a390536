// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MS-SSIM: values, per-image and per-channel results and gradients against the independent float64
// reference (ReferenceMSSSIM.hpp), with both windows (kssim::Window::Float32: pytorch-msssim's float32 window
// and raw moments at every scale), central differences, the clamp's zero gradient, the training object, and
// the errors of bad input.
#include "ErrorRecord.hpp"
#include "ReferenceMSSSIM.hpp"
#include "TrainingChecks.hpp"
#include "TestingUtilities.hpp"

using namespace kssim_test;

namespace {

// Value 1e-6 (float); gradients 1e-4 relative L2 (float, issue 17) and 1e-10 (double).
template <class T>
constexpr double ms_value_tolerance() {
  return std::is_same_v<T, float> ? 1e-6 : value_tolerance<T>();
}
template <class T>
constexpr double ms_gradient_tolerance() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-10;
}

kssim::MSSSIMOptions ms_options(const ReferenceOptions& ro, std::vector<double> weights) {
  kssim::MSSSIMOptions o;
  o.ssim = to_options(ro);
  o.weights = std::move(weights);
  return o;
}

const std::vector<double> default_weights{0.0448, 0.2856, 0.3001, 0.2363, 0.1333};

// Every output of the library (mean, per image, per channel, both gradients and one at a time) against the
// reference's for the images xr, yr (already of the value type).
template <class C, int Rank>
void expect_ms_ssim_outputs_match(const Shape& s, const MsSsimReference& ref, const std::vector<double>& xr,
                                  const std::vector<double>& yr, const kssim::MSSSIMOptions& opts) {
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  using Mem = typename C::memory_space;
  Exec exec;
  auto a = to_view<C, Rank>("a", s, xr);
  auto b = to_view<C, Rank>("b", s, yr);
  const double mean = kssim::ms_ssim(exec, a, b, opts);
  record_error("value_error", std::abs(mean - ref.mean));
  EXPECT_NEAR(mean, ref.mean, ms_value_tolerance<T>());

  Kokkos::View<double*, Mem> per_image("per_image", s.n);
  Kokkos::View<double**, Mem> per_channel("per_channel", s.n, s.c);
  kssim::ms_ssim_per_image(exec, a, b, per_image, opts);
  kssim::ms_ssim_per_channel(exec, a, b, per_channel, opts);
  auto pi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_image);
  auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
  for (int n = 0; n < s.n; ++n) {
    double image = 0;
    for (int c = 0; c < s.c; ++c) {
      const double want = ref.per_slice[std::size_t(n) * s.c + c];
      image += want / s.c;
      record_error("value_error", std::abs(pc(n, c) - want));
      EXPECT_NEAR(pc(n, c), want, ms_value_tolerance<T>()) << "n " << n << " c " << c;
    }
    EXPECT_NEAR(pi(n), image, ms_value_tolerance<T>()) << "n " << n;
  }

  auto g1 = make_view<C, Rank>("g1", s), g2 = make_view<C, Rank>("g2", s);
  const double v = kssim::ms_ssim_grad(exec, a, b, g1, g2, opts);
  EXPECT_NEAR(v, ref.mean, ms_value_tolerance<T>());
  const double e1 = relative_l2_error(from_view(g1, s), ref.grad1), e2 = relative_l2_error(from_view(g2, s), ref.grad2);
  record_error("gradient_error", std::max(e1, e2));
  EXPECT_LE(e1, ms_gradient_tolerance<T>());
  EXPECT_LE(e2, ms_gradient_tolerance<T>());
  // One gradient at a time gives the same numbers.
  auto h2 = make_view<C, Rank>("h2", s);
  kssim::ms_ssim_grad(exec, a, b, decltype(h2){}, h2, opts);
  EXPECT_LE(relative_l2_error(from_view(h2, s), ref.grad2), ms_gradient_tolerance<T>());
}

// Every output of the library against the reference, for one input pair: with the router's choice, or with
// every schedule it can pick for the scales' plans forced in turn (TestingUtilities.hpp, schedules_for).
template <class C, int Rank>
void expect_ms_ssim_matches_reference(const Shape& s, const ReferenceOptions& ro, const std::vector<double>& weights,
                                      const std::vector<double>& x, const std::vector<double>& y,
                                      bool every_schedule = false) {
  using T = typename C::value_type;
  SCOPED_TRACE(describe(s, ro) + " scales " + std::to_string(weights.size()));
  const auto xr = rounded<T>(x), yr = rounded<T>(y);
  const MsSsimReference ref = reference_ms_ssim(s, xr, yr, ro, weights, true);
  auto opts = ms_options(ro, weights);
  const std::vector<kssim::Schedule> schedules =
      every_schedule ? schedules_for<C, Rank>(opts.ssim) : std::vector<kssim::Schedule>{kssim::Schedule::Auto};
  for (const kssim::Schedule schedule : schedules) {
    SCOPED_TRACE(std::string("schedule ") + kssim::to_string(schedule));
    opts.ssim.schedule = schedule;
    expect_ms_ssim_outputs_match<C, Rank>(s, ref, xr, yr, opts);
  }
}

}  // namespace

template <class C>
class MsSsim : public ::testing::Test {};
TYPED_TEST_SUITE(MsSsim, AllConfigs, ConfigNames);

// pytorch-msssim's defaults: window 11, sigma 1.5, five scales; the smallest image they accept, odd.
TYPED_TEST(MsSsim, MatchesReferenceWithDefaultOptionsAtTheSmallestSize) {
  const Shape s{1, 2, 1, 161, 165};
  const auto x = random_image(s, 300);
  expect_ms_ssim_matches_reference<TypeParam, 4>(s, ReferenceOptions{}, default_weights, x, noisy_copy(x, 301, 0.1));
}

// One image case of the reference checks below: shape, window, sigma, data range, weights.
struct ReferenceCase {
  Shape s;
  int window;
  double sigma, range;
  std::vector<double> weights;
};

// Each case against the reference, on noisy pairs drawn from `seed` on; the float32 window on every schedule.
template <class Config, std::size_t N>
void expect_cases_match_reference(const ReferenceCase (&cases)[N], unsigned seed, bool float32_window) {
  for (const ReferenceCase& c : cases) {
    ReferenceOptions ro{.window = c.window, .sigma = c.sigma, .data_range = c.range};
    ro.float32_window = float32_window;
    const auto [x, y] = next_noisy_pair(c.s, seed, c.range, 0.12 * c.range);
    expect_ms_ssim_matches_reference<Config, 4>(c.s, ro, c.weights, x, y, float32_window);
  }
}

TYPED_TEST(MsSsim, MatchesReferenceForOddSizesOtherWindowsWeightsAndRanges) {
  const ReferenceCase cases[] = {
      {{2, 3, 1, 37, 45}, 3, 0.8, 1.0, default_weights},         // scales 37x45 .. 3x3, every pad both ways
      {{1, 2, 1, 19, 34}, 5, 1.1, 255.0, {0.2, 0.5, 0.3}},       // three scales, 8-bit range
      {{1, 1, 1, 12, 15}, 7, 1.5, 1.0, {1.0}},                   // one scale: max(SSIM, 0)
      {{1, 2, 1, 40, 26}, 3, 1.0, 1.0, {0.0, 0.7, 0.3, 0.0}},    // zero weights
  };
  expect_cases_match_reference<TypeParam>(cases, 310, false);
}

// pytorch-msssim's own window (kssim::Window::Float32): its float32 weights and raw moments at every scale, the
// cs terms included, with every schedule the router can pick. The 11- and 7-tap windows have kernel instances of
// their own on GPUs (FixedTaps.hpp; 11 also a forward without partials), 3 the generic one; odd sizes.
TYPED_TEST(MsSsim, MatchesReferenceWithTheFloat32Window) {
  const ReferenceCase cases[] = {
      {{1, 2, 1, 47, 43}, 11, 1.5, 1.0, {0.3, 0.4, 0.3}},    // pytorch-msssim's window, three scales to 12x11
      {{2, 1, 1, 29, 35}, 7, 1.0, 255.0, {0.3, 0.3, 0.4}},   // 8-bit range, three scales to 8x9
      {{1, 3, 1, 37, 45}, 3, 0.8, 1.0, default_weights},      // five scales to 3x3, every pad both ways
  };
  expect_cases_match_reference<TypeParam>(cases, 380, true);
}

// Volumes with the float32 window (2x2x2 pooling, the depth pass's map; 11 taps: the slice-fused schedule on GPUs).
TYPED_TEST(MsSsim, MatchesReferenceWithTheFloat32WindowForVolumes) {
  Shape small{1, 2, 11, 13, 10}, wide{1, 1, 21, 23, 22};
  small.volumetric = wide.volumetric = true;
  ReferenceOptions ro;
  ro.float32_window = true;
  ro.window = 3;
  ro.sigma = 0.9;
  const auto x = random_image(small, 390);
  expect_ms_ssim_matches_reference<TypeParam, 5>(small, ro, {0.3, 0.3, 0.4}, x, noisy_copy(x, 391, 0.1), true);
  ro.window = 11;
  ro.sigma = 1.5;
  const auto u = random_image(wide, 392);
  expect_ms_ssim_matches_reference<TypeParam, 5>(wide, ro, {0.6, 0.4}, u, noisy_copy(u, 393, 0.1), true);
}

// The float32 window moves MS-SSIM from the exact window's value by what the reference says. Its deficit d
// (1 - its sum) adds d mu1 mu2 to each window's covariance and d (mu1^2 + mu2^2) to its variance sum, which moves
// cs by about 2 d mu^2 var(x - y) / (v1 + v2 + C2)^2: low-contrast images far from zero (8 to 8.25, L = 1) move
// it by ~1e-4, far above float's rounding. With the last scale's weight 0 only the cs terms count, so a cs that
// ignored the option would leave the difference at 0. The gradients move by ~3e-3 relative L2, and the
// difference of kssim's two gradients must be the reference's (float: to a few percent, its own rounding).
TYPED_TEST(MsSsim, Float32WindowMovesTheValueAsTheReferenceSays) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{1, 2, 1, 45, 47};
  ReferenceOptions exact, f32;
  f32.float32_window = true;
  const auto x = rounded<T>(random_image(s, 396, 8.0, 8.25)), y = rounded<T>(noisy_copy(x, 397, 0.05));
  typename C::execution_space exec;
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, y);
  for (const std::vector<double>& weights : {std::vector<double>{0.5, 0.5, 0.0}, std::vector<double>{0.2, 0.3, 0.5}}) {
    SCOPED_TRACE("last scale's weight " + std::to_string(weights.back()));
    const MsSsimReference want_exact = reference_ms_ssim(s, x, y, exact, weights, true);
    const MsSsimReference want_f32 = reference_ms_ssim(s, x, y, f32, weights, true);
    const double want = want_f32.mean - want_exact.mean;
    auto g_exact = make_view<C>("g_exact", s), g_f32 = make_view<C>("g_f32", s);
    const double got = kssim::ms_ssim_grad(exec, a, b, g_f32, {}, ms_options(f32, weights)) -
                       kssim::ms_ssim_grad(exec, a, b, g_exact, {}, ms_options(exact, weights));
    ASSERT_GT(std::abs(want), 1e-4) << "the effect is there to see";
    record_error("float32_shift_error", std::abs(got - want) / std::abs(want));
    EXPECT_NEAR(got, want, (std::is_same_v<T, float> ? 1e-3 : 1e-7) * std::abs(want));
    std::vector<double> want_shift(s.size()), got_shift(s.size());
    const auto e = from_view(g_exact, s), f = from_view(g_f32, s);
    for (std::size_t i = 0; i < s.size(); ++i) {
      want_shift[i] = want_f32.grad1[i] - want_exact.grad1[i];
      got_shift[i] = f[i] - e[i];
    }
    ASSERT_GT(relative_l2_error(want_f32.grad1, want_exact.grad1), 1e-3) << "the effect is there to see";
    const double shift_error = relative_l2_error(got_shift, want_shift);
    record_error("float32_gradient_shift_error", shift_error);
    EXPECT_LE(shift_error, (std::is_same_v<T, float> ? 5e-2 : 1e-6));
  }
}

TYPED_TEST(MsSsim, MatchesReferenceForVolumes) {
  Shape s{1, 2, 11, 13, 10};
  s.volumetric = true;
  ReferenceOptions ro;
  ro.window = 3;
  ro.sigma = 0.9;
  const auto x = random_image(s, 320);
  expect_ms_ssim_matches_reference<TypeParam, 5>(s, ro, {0.3, 0.3, 0.4}, x, noisy_copy(x, 321, 0.1));
}

// Central differences of the library's own double value at random pixels of both images, with both windows.
TYPED_TEST(MsSsim, GradientsMatchFiniteDifferences) {
  const Shape s{1, 2, 1, 21, 19};
  for (const bool float32_window : {false, true}) {
    SCOPED_TRACE(float32_window ? "float32 window" : "exact window");
    ReferenceOptions ro;
    ro.window = 5;
    ro.float32_window = float32_window;
    const auto opts = ms_options(ro, {0.3, 0.3, 0.4});
    typename TypeParam::execution_space exec;
    expect_finite_differences_in_double<TypeParam>(
        s, 330, [&](const auto& a, const auto& b, auto& g1, auto& g2) { kssim::ms_ssim_grad(exec, a, b, g1, g2, opts); },
        [&](const auto& a, const auto& b) { return kssim::ms_ssim(exec, a, b, opts); }, 1e-5, 1e-10, 10, 332);
  }
}

// Slice 0 is anti-correlated (y = 1 - x: negative contrast-structure at the first scale), so its MS-SSIM
// is clamped to 0 and its gradient is exactly 0; slice 1 is an ordinary pair and matches the reference.
TYPED_TEST(MsSsim, ClampedSlicesHaveZeroValueAndZeroGradient) {
  using C = TypeParam;
  using T = typename C::value_type;
  const Shape s{1, 2, 1, 35, 38};
  ReferenceOptions ro;
  ro.window = 3;
  auto x = rounded<T>(random_image(s, 340));
  auto y = rounded<T>(noisy_copy(x, 341, 0.1));
  const std::size_t slice = std::size_t(s.h) * s.w;
  for (std::size_t i = 0; i < slice; ++i) y[i] = double(T(1 - x[i]));
  const MsSsimReference ref = reference_ms_ssim(s, x, y, ro, default_weights, true);
  ASSERT_LT(ref.terms[0][0], 0.0) << "the test needs a clamped slice";
  ASSERT_GT(ref.per_slice[1], 0.5);
  typename C::execution_space exec;
  auto a = to_view<C>("a", s, x), b = to_view<C>("b", s, y);
  Kokkos::View<double**, typename C::memory_space> per_channel("per_channel", 1, 2);
  kssim::ms_ssim_per_channel(exec, a, b, per_channel, ms_options(ro, default_weights));
  auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
  EXPECT_EQ(pc(0, 0), 0.0);
  auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
  const double v = kssim::ms_ssim_grad(exec, a, b, g1, g2, ms_options(ro, default_weights));
  EXPECT_NEAR(v, ref.mean, ms_value_tolerance<T>());
  const auto got1 = from_view(g1, s), got2 = from_view(g2, s);
  for (std::size_t i = 0; i < slice; ++i) {
    ASSERT_EQ(got1[i], 0.0) << i;
    ASSERT_EQ(got2[i], 0.0) << i;
  }
  EXPECT_LE(relative_l2_error(got1, ref.grad1), ms_gradient_tolerance<T>());
  EXPECT_LE(relative_l2_error(got2, ref.grad2), ms_gradient_tolerance<T>());
}

TYPED_TEST(MsSsim, IdenticalImagesGiveExactlyOneAndZeroGradient) {
  using C = TypeParam;
  const Shape s{2, 1, 1, 34, 41};
  auto a = to_view<C>("a", s, random_image(s, 350));
  auto g1 = make_view<C>("g1", s);
  for (const bool float32_window : {false, true}) {
    SCOPED_TRACE(float32_window ? "float32 window" : "exact window");
    ReferenceOptions ro{.window = 3};
    ro.float32_window = float32_window;
    const auto opts = ms_options(ro, default_weights);
    expect_identical_images_give(kssim::ms_ssim_grad(typename C::execution_space(), a, a, g1, {}, opts), 1.0, s,
                                 std::is_same_v<typename C::value_type, float> ? 1e-6 : 1e-14, g1);
  }
}

TYPED_TEST(MsSsim, TrainingObjectMatchesOneCallFunctionsAndAccumulates) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 36, 37};
  const auto in = noisy_views<C>(s, 360, 0.1);
  typename C::execution_space exec;
  for (const bool float32_window : {false, true}) {
    SCOPED_TRACE(float32_window ? "float32 window" : "exact window");
    ReferenceOptions ro{.window = 3};
    ro.float32_window = float32_window;
    const auto opts = ms_options(ro, default_weights);
    const auto make = training_object<kssim::MSSSIM, C>(s, opts);
    const auto forward = forward_on(in);
    const auto one_call = [&](const auto& g1, const auto& g2) {
      return kssim::ms_ssim_grad(exec, in.a, in.b, g1, g2, opts);
    };
    expect_training_object_agrees_with_one_call_function<C>(s, make, forward, one_call, 362);
    expect_forward_into_writes_the_value_as_float<C>(
        make, [&](auto& loss, float* value) { loss.forward_into(in.a, in.b, value); });
  }
}

TYPED_TEST(MsSsim, TrainingStepsAllocateNothingAndNeverSynchronise) {
  using C = TypeParam;
  const Shape s{2, 3, 1, 40, 44};
  const auto opts = ms_options(ReferenceOptions{.window = 3}, default_weights);
  const auto in = noisy_views<C>(s, 370, 0.1);
  expect_training_steps_allocate_nothing_and_never_synchronise<C>(s, training_object<kssim::MSSSIM, C>(s, opts),
                                                                  forward_on(in));
}

TYPED_TEST(MsSsim, RejectsBadInputWithInvalidArgument) {
  using C = TypeParam;
  typename C::execution_space exec;
  auto expect_invalid = [](auto&& call, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "no exception; expected one mentioning '" << words << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  // pytorch-msssim's bound with the defaults: every spatial extent > 160.
  const Shape small{1, 1, 1, 160, 200};
  auto a = make_view<C>("a", small), b = make_view<C>("b", small);
  expect_invalid([&] { kssim::ms_ssim(exec, a, b); }, "> 160");
  kssim::MSSSIMOptions o;
  o.ssim.window_size = 7;  // (7 - 1) * 16 = 96 < 160: accepted
  EXPECT_NO_THROW(kssim::ms_ssim(exec, a, b, o));
  o.weights = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5};  // six scales: > 192
  expect_invalid([&] { kssim::ms_ssim(exec, a, b, o); }, "> 192");
  o = {};
  o.ssim.padding = kssim::Padding::Same;
  expect_invalid([&] { kssim::ms_ssim(exec, a, b, o); }, "Valid");
  o = {};
  o.weights = {};
  expect_invalid([&] { kssim::ms_ssim(exec, a, b, o); }, "weights");
  o.weights = {0.5, -0.1};
  expect_invalid([&] { kssim::ms_ssim(exec, a, b, o); }, ">= 0");
  o.weights = std::vector<double>(kssim::max_ms_ssim_scales + 1, 0.1);
  expect_invalid([&] { kssim::ms_ssim(exec, a, b, o); }, "weights");
  using Exec = typename C::execution_space;
  expect_invalid([&] { kssim::MSSSIM<Exec, typename C::value_type>(exec, {1, 1, 100, 300}); }, "> 160");
}
