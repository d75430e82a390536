// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The property checks of the training objects (kssim::SSIM, MSSSIM, MaskedSSIM, L1SSIMLoss) and of the
// gradients of every loss, written once and instantiated per object by its test:
//  - the object gives the one-call function's value and gradients bit for bit, for each set of gradients
//    it can be made for, and accumulates with host and device upstream factors;
//  - "no allocation and no host synchronisation per step": count_step_events counts the allocations and
//    fences (Kokkos Tools callbacks) while `steps` runs, then proves the counters work with one allocation
//    and one fence of its own (launch verification, Launch.hpp, allocates and fences by design, so it is off
//    while the steps run);
//  - gradients against central differences of the library's own double value;
//  - identical images: the exact value, and gradients that vanish.
//
// An object under test is given as make(kssim::Gradients) (builds one for the test's shape) and
// forward(loss) (runs its forward() on the test's images, and mask).

#include "TestingUtilities.hpp"

#include <kssim/impl/core/Launch.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace kssim_test {

// forward(loss) for an object under test that takes the two images of `in` (an ImagePair) alone.
template <class Pair>
auto forward_on(const Pair& in) {
  return [&in](auto& loss) { loss.forward(in.a, in.b); };
}

struct StepEvents {
  int allocations = 0, fences = 0;              // during the steps
  int probe_allocations = 0, probe_fences = 0;  // during the probe: must be >= 1 each
  std::string seen;                             // labels of what the steps did, for failure messages
};

namespace step_events_detail {
inline StepEvents* current = nullptr;
// Zero-byte records are not memory: Kokkos 4.6's CUDA backend registers an empty team-scratch record on every
// TeamPolicy launch that asks for no level-1 scratch.
inline void count_allocation(Kokkos::Profiling::SpaceHandle, const char* label, const void*, uint64_t size) {
  if (size == 0 || !current) return;
  ++current->allocations;
  current->seen += std::string(" alloc:") + label;
}
inline void count_fence(const char* name, uint32_t, uint64_t* id) {
  *id = 0;
  if (!current) return;
  ++current->fences;
  current->seen += std::string(" fence:") + name;
}
}  // namespace step_events_detail

template <class Mem, class Exec, class Steps>
StepEvents count_step_events(const Exec& exec, const Steps& steps) {
  namespace d = step_events_detail;
  StepEvents events, probe;
#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = false;
#endif
  Kokkos::Tools::Experimental::set_allocate_data_callback(d::count_allocation);
  Kokkos::Tools::Experimental::set_begin_fence_callback(d::count_fence);
  d::current = &events;
  steps();
  d::current = &probe;
  { Kokkos::View<double*, Mem> allocated("kssim_test::probe", 4); }
  exec.fence();
  d::current = nullptr;
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
#if defined(KSSIM_VERIFY_LAUNCHES)
  kssim::impl::launch_verification() = true;
#endif
  events.probe_allocations = probe.allocations;
  events.probe_fences = probe.fences;
  return events;
}

template <class Mem, class Exec, class Steps>
void expect_steps_allocate_nothing_and_never_synchronise(const Exec& exec, const Steps& steps) {
  const StepEvents e = count_step_events<Mem>(exec, steps);
  EXPECT_EQ(e.allocations, 0) << e.seen;
  EXPECT_EQ(e.fences, 0) << e.seen;
  EXPECT_GE(e.probe_allocations, 1);
  EXPECT_GE(e.probe_fences, 1);
}

// make(gradients) for the checks below: an Object<Exec, T> (kssim::L1SSIMLoss, MSSSIM) of images of shape s
// and options opts, made for the gradients asked.
template <template <class, class, int> class Object, class C, class Opts>
auto training_object(const Shape& s, const Opts& opts) {
  using Exec = typename C::execution_space;
  return [s, opts](kssim::Gradients which) {
    return Object<Exec, typename C::value_type, 4>(Exec(), {s.n, s.c, s.h, s.w}, opts, which);
  };
}

// For each set of gradients the object can be made for: after forward() and backward(), value_on_host() and
// the gradients are one_call(grad1, grad2)'s (its value; {} skips a gradient) to the bit.
template <class C, class Make, class Forward, class OneCall>
void expect_training_object_matches_one_call_function(const Shape& s, const Make& make, const Forward& forward,
                                                      const OneCall& one_call) {
  for (auto which : {kssim::Gradients::Image1, kssim::Gradients::Image2, kssim::Gradients::Both}) {
    const bool want1 = which != kssim::Gradients::Image2, want2 = which != kssim::Gradients::Image1;
    SCOPED_TRACE(std::string("gradients of image ") + (want1 ? "1" : "") + (want2 ? "2" : ""));
    auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s), r1 = make_view<C>("r1", s), r2 = make_view<C>("r2", s);
    const double expected = one_call(want1 ? r1 : decltype(r1){}, want2 ? r2 : decltype(r2){});
    auto loss = make(which);
    forward(loss);
    loss.backward(want1 ? g1 : decltype(g1){}, want2 ? g2 : decltype(g2){});
    EXPECT_EQ(loss.value_on_host(), expected);
    if (want1) {  // braces: EXPECT_* is an if-else of its own (-Wdangling-else)
      EXPECT_EQ(from_view(g1, s), from_view(r1, s));
    }
    if (want2) {
      EXPECT_EQ(from_view(g2, s), from_view(r2, s));
    }
  }
}

// After forward(): an existing gradient (random, from `seed`) plus -0.2 d/dx1 from a host factor and 0.5 d/dx1
// from a device factor is start + 0.3 * want1 (want1: one_call's d value / d x1); then backward() with the
// device factor alone overwrites it with 0.5 * want1, and a float device factor (a float32 loss's gradient,
// read by the kernels as it is) of 0.25 adds 0.25 * want1. An unallocated device factor is refused.
template <class C, class Make, class Forward, class OneCall>
void expect_accumulates_with_host_and_device_factors(const Shape& s, const Make& make, const Forward& forward,
                                                     const OneCall& one_call, unsigned seed) {
  using T = typename C::value_type;
  auto r1 = make_view<C>("r1", s);
  one_call(r1, decltype(r1){});
  const auto want1 = from_view(r1, s);
  auto loss = make(kssim::Gradients::Image1);
  forward(loss);
  const auto start = random_image(s, seed);
  auto g = to_view<C>("g", s, start);
  loss.backward(g, {}, kssim::Accumulate::Yes, -0.2);
  const auto upstream = device_scalar<C>(0.5);
  loss.backward(upstream, g, {}, kssim::Accumulate::Yes);
  std::vector<double> want(s.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = double(T(start[i])) + (-0.2 + 0.5) * want1[i];
  EXPECT_LE(relative_l2_error(from_view(g, s), want), 10 * gradient_tolerance<T>());

  loss.backward(upstream, g);  // overwrite
  std::vector<double> half(want1);
  for (double& v : half) v *= 0.5;
  EXPECT_LE(relative_l2_error(from_view(g, s), half), gradient_tolerance<T>());

  const auto quarter = device_scalar<C>(0.25f);
  loss.backward(quarter, g, {}, kssim::Accumulate::Yes);
  for (double& v : half) v *= 1.5;
  EXPECT_LE(relative_l2_error(from_view(g, s), half), gradient_tolerance<T>());
  EXPECT_THROW(loss.backward(Kokkos::View<const float, typename C::memory_space>(), g), std::invalid_argument);
}

// Once warm, forward() and backward() (host and device upstream factors, accumulating) allocate nothing and
// never synchronise the host.
template <class C, class Make, class Forward>
void expect_training_steps_allocate_nothing_and_never_synchronise(const Shape& s, const Make& make,
                                                                  const Forward& forward) {
  typename C::execution_space exec;
  auto g = make_view<C>("g", s);
  auto loss = make(kssim::Gradients::Image1);
  forward(loss);  // warm-up: first launches may set up backend state
  loss.backward(g);
  exec.fence();
  const auto upstream = device_scalar<C>(0.5);
  expect_steps_allocate_nothing_and_never_synchronise<typename C::memory_space>(exec, [&] {
    for (int step = 0; step < 5; ++step) {
      forward(loss);
      loss.backward(g, {}, kssim::Accumulate::Yes, 0.1);
      loss.backward(upstream, g, {}, kssim::Accumulate::Yes);
    }
  });
}

// Central differences (step h) of value(a, b), the library's own double value of the images x and y as
// Views, at `trials` random pixels (from `seed`) of both images against the analytic gradients: within 1e-6
// relative + `absolute`.
template <class C, class Value>
void expect_gradients_match_central_differences(const Shape& s, std::vector<double> x, std::vector<double> y,
                                                const std::vector<double>& grad1, const std::vector<double>& grad2,
                                                const Value& value, double h, double absolute, int trials,
                                                unsigned seed) {
  const auto value_at = [&] { return value(to_view<C>("a", s, x), to_view<C>("b", s, y)); };
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const std::size_t q = rng() % x.size();
    for (int which = 0; which < 2; ++which) {
      auto& img = which == 0 ? x : y;
      const double saved = img[q];
      img[q] = saved + h;
      const double up = value_at();
      img[q] = saved - h;
      const double down = value_at();
      img[q] = saved;
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(which == 0 ? grad1[q] : grad2[q], fd, 1e-6 * std::abs(fd) + absolute)
          << "pixel " << q << " image " << which + 1;
    }
  }
}

// Both checks of a training object against its one-call function (the two above), as each metric runs them.
template <class C, class Make, class Forward, class OneCall>
void expect_training_object_agrees_with_one_call_function(const Shape& s, const Make& make, const Forward& forward,
                                                          const OneCall& one_call, unsigned seed) {
  expect_training_object_matches_one_call_function<C>(s, make, forward, one_call);
  expect_accumulates_with_host_and_device_factors<C>(s, make, forward, one_call, seed);
}

// forward_into(loss, value) runs the object's forward_into() on the test's images: the value it writes to the
// device float `value` is value() rounded once to float (the kernel that computes the value writes it: the
// PyTorch binding's float results), and a null pointer is refused.
template <class C, class Make, class ForwardInto>
void expect_forward_into_writes_the_value_as_float(const Make& make, const ForwardInto& forward_into) {
  auto loss = make(kssim::Gradients::None);
  const auto value = device_scalar<C>(-1.0f);  // must be overwritten
  forward_into(loss, value.data());
  const double want = loss.value_on_host();
  float written = 0;
  Kokkos::deep_copy(written, value);
  EXPECT_TRUE(std::isfinite(want) && want != -1.0);
  EXPECT_EQ(written, float(want));
  EXPECT_THROW(forward_into(loss, static_cast<float*>(nullptr)), std::invalid_argument);
}

// The finite-difference test of each metric: x random (from `seed`), y = x + 0.2 noise (seed + 1),
// grad(a, b, g1, g2) writes the analytic gradients, then expect_gradients_match_central_differences at
// pixels drawn from `pixel_seed`. In double only: float rounding swamps a central difference; others skip.
template <class C, class Grad, class Value>
void expect_finite_differences_in_double(const Shape& s, unsigned seed, const Grad& grad, const Value& value, double h,
                                         double absolute, int trials, unsigned pixel_seed) {
  if constexpr (!std::is_same_v<typename C::value_type, double>) {
    GTEST_SKIP() << "finite differences are checked in double";
  } else {
    const auto x = random_image(s, seed);
    const auto y = noisy_copy(x, seed + 1, 0.2);
    auto g1 = make_view<C>("g1", s), g2 = make_view<C>("g2", s);
    grad(to_view<C>("a", s, x), to_view<C>("b", s, y), g1, g2);
    expect_gradients_match_central_differences<C>(s, x, y, from_view(g1, s), from_view(g2, s), value, h, absolute,
                                                  trials, pixel_seed);
  }
}

// Identical images: the value is exactly `want`, and every pixel of each gradient is 0 within eps.
template <class... Gradient>
void expect_identical_images_give(double got, double want, const Shape& s, double eps, const Gradient&... grads) {
  EXPECT_EQ(got, want);
  for (const auto& grad : {from_view(grads, s)...})
    for (double g : grad) ASSERT_NEAR(g, 0.0, eps);
}

}  // namespace kssim_test
