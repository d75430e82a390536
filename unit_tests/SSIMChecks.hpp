// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Checks shared by the 2D and 3D tests: every output of the library against the float64 reference.

#include "TestingUtilities.hpp"

namespace kssim_test {

template <class C, int Rank>
void expect_forward_outputs(const Shape& s, const ReferenceResult& ref, const ImageView<C, Rank>& a,
                            const ImageView<C, Rank>& b, const kssim::Options& opts) {
  using T = typename C::value_type;
  typename C::execution_space exec;

  const double mean = kssim::ssim(exec, a, b, opts);
  EXPECT_NEAR(mean, ref.mean, value_tolerance<T>());

  Kokkos::View<double, typename C::memory_space> mean_view("mean");
  kssim::ssim(exec, a, b, mean_view, opts);
  double mean_from_view = 0;
  Kokkos::deep_copy(mean_from_view, mean_view);
  EXPECT_EQ(mean_from_view, mean);

  auto map = make_view<C, Rank>("map", ref.map_shape);
  kssim::ssim_map(exec, a, b, map, opts);
  EXPECT_LE(max_abs_error(from_view(map, ref.map_shape), ref.map), map_tolerance<T>());

  Kokkos::View<double*, typename C::memory_space> per_image("per_image", s.n);
  kssim::ssim_per_image(exec, a, b, per_image, opts);
  auto pi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_image);
  for (int n = 0; n < s.n; ++n) EXPECT_NEAR(pi(n), ref.per_image[n], value_tolerance<T>());

  Kokkos::View<float**, typename C::memory_space> per_channel("per_channel", s.n, s.c);
  kssim::ssim_per_channel(exec, a, b, per_channel, opts);
  auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c) EXPECT_NEAR(pc(n, c), ref.per_channel[std::size_t(n) * s.c + c], 1e-6);
}

// The float64 reference for x and y as stored in T (with gradients or not), then check(s, ref, a, b, opts) with
// their Views on every schedule the router can pick for the problem.
template <class C, int Rank, class Check>
void expect_on_every_schedule(const Shape& s, const ReferenceOptions& ro, const std::vector<double>& x,
                              const std::vector<double>& y, kssim::Options opts, bool gradients, const Check& check) {
  SCOPED_TRACE(describe(s, ro));
  const auto xr = rounded<typename C::value_type>(x), yr = rounded<typename C::value_type>(y);
  const ReferenceResult ref = reference_ssim(s, xr, yr, ro, gradients);
  const auto a = to_view<C, Rank>("a", s, xr), b = to_view<C, Rank>("b", s, yr);
  for (kssim::Schedule schedule : schedules_for<C, Rank>(opts)) {
    opts.schedule = schedule;
    SCOPED_TRACE(std::string("schedule ") + kssim::to_string(schedule));
    check(s, ref, a, b, opts);
  }
}

template <class C, int Rank>
void expect_forward_matches_reference(const Shape& s, const ReferenceOptions& ro, const std::vector<double>& x,
                                      const std::vector<double>& y, const kssim::Options& opts) {
  expect_on_every_schedule<C, Rank>(s, ro, x, y, opts, false, expect_forward_outputs<C, Rank>);
}

template <class C, int Rank>
void expect_gradient_outputs(const Shape& s, const ReferenceResult& ref, const ImageView<C, Rank>& a,
                             const ImageView<C, Rank>& b, const kssim::Options& opts) {
  using T = typename C::value_type;
  typename C::execution_space exec;
  auto g1 = make_view<C, Rank>("g1", s);
  auto g2 = make_view<C, Rank>("g2", s);

  const double mean = kssim::ssim_grad(exec, a, b, g1, g2, opts);
  EXPECT_NEAR(mean, ref.mean, value_tolerance<T>());
  EXPECT_LE(relative_l2_error(from_view(g1, s), ref.grad1), gradient_tolerance<T>());
  EXPECT_LE(relative_l2_error(from_view(g2, s), ref.grad2), gradient_tolerance<T>());

  // One gradient at a time gives the same numbers.
  auto h1 = make_view<C, Rank>("h1", s);
  auto h2 = make_view<C, Rank>("h2", s);
  kssim::ssim_grad(exec, a, b, h1, {}, opts);
  kssim::ssim_grad(exec, a, b, decltype(h2){}, h2, opts);
  EXPECT_LE(relative_l2_error(from_view(h1, s), ref.grad1), gradient_tolerance<T>());
  EXPECT_LE(relative_l2_error(from_view(h2, s), ref.grad2), gradient_tolerance<T>());
}

template <class C, int Rank>
void expect_gradients_match_reference(const Shape& s, const ReferenceOptions& ro, const std::vector<double>& x,
                                      const std::vector<double>& y, const kssim::Options& opts) {
  expect_on_every_schedule<C, Rank>(s, ro, x, y, opts, true, expect_gradient_outputs<C, Rank>);
}

// A random image in [0, hi) (seed) and its noisy copy (seed + 1, amplitude): forward outputs and gradients
// against the reference, on every schedule, with the options ro describes. seed moves on by 2.
template <class C, int Rank>
void expect_noisy_pair_matches_reference(const Shape& s, const ReferenceOptions& ro, unsigned& seed, double amplitude,
                                         double hi = 1) {
  const auto [x, y] = next_noisy_pair(s, seed, hi, amplitude);
  expect_forward_matches_reference<C, Rank>(s, ro, x, y, to_options(ro));
  expect_gradients_match_reference<C, Rank>(s, ro, x, y, to_options(ro));
}

}  // namespace kssim_test
