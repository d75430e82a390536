// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NaN and Inf in the inputs. kssim's documented behaviour is "propagate": a non-finite input pixel makes
// the map NaN at every map pixel whose window covers it, the mean NaN (and the per-image / per-channel
// means of its slice), while every other map pixel, slice and mean stays finite and correct. Gradients are
// NaN exactly where a NaN map pixel's window reaches (the footprint of the footprint) and finite and
// correct elsewhere. A non-finite recentring sample (the centre pixel of a slice, impl/stages/Recentring.hpp)
// makes that slice recentre on a nearby finite sample instead.
#include "TestingUtilities.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace kssim_test;

template <class C>
class NonFinite : public ::testing::Test {};
TYPED_TEST_SUITE(NonFinite, AllConfigs, ConfigNames);

namespace {

// Splits `got` by its expected NaN footprint (nan_at[i] != 0: must be NaN): counts the footprint's elements
// that are not NaN and the others that are not finite, and calls finite(i) for the rest.
struct FootprintCounts {
  int missing_nan = 0, wrong_nan = 0;
};
template <class Finite>
FootprintCounts split_by_footprint(const std::vector<double>& got, const std::vector<char>& nan_at,
                                   const Finite& finite) {
  FootprintCounts counts;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (nan_at[i])
      counts.missing_nan += !std::isnan(got[i]);
    else if (!std::isfinite(got[i]))
      ++counts.wrong_nan;
    else
      finite(i);
  }
  return counts;
}

struct Pixel {
  int n, c, d, h, w;
};

struct Scenario {
  std::string name;
  Shape s;
  int window;
  bool same;
  std::vector<Pixel> bad;  // pixels made non-finite
  double value;            // NaN, +Inf or -Inf
  bool in_x, in_y;         // which image(s) get it
  double lo = 0, hi = 1;   // the finite data
};

// Does the window of map position p (along one axis) cover input position q?
bool covers(int p, int q, int window, int pad) { return q >= p - pad && q <= p - pad + window - 1; }

// Map pixels whose window covers a bad pixel.
std::vector<char> expected_map_nan(const Scenario& sc, const Shape& m) {
  std::vector<char> nan(m.size(), 0);
  const int pad = sc.same ? sc.window / 2 : 0;
  for (const Pixel& b : sc.bad)
    for (int pd = 0; pd < m.d; ++pd)
      for (int ph = 0; ph < m.h; ++ph)
        for (int pw = 0; pw < m.w; ++pw) {
          const bool depth = !sc.s.volumetric || covers(pd, b.d, sc.window, pad);
          if (depth && covers(ph, b.h, sc.window, pad) && covers(pw, b.w, sc.window, pad))
            nan[m.index(b.n, b.c, pd, ph, pw)] = 1;
        }
  return nan;
}

// Input pixels reached by the window of a NaN map pixel, and the bad pixels themselves.
std::vector<char> expected_gradient_nan(const Scenario& sc, const Shape& m, const std::vector<char>& map_nan) {
  const Shape& s = sc.s;
  std::vector<char> nan(s.size(), 0);
  const int pad = sc.same ? sc.window / 2 : 0, wd = s.volumetric ? sc.window : 1, padd = s.volumetric ? pad : 0;
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int pd = 0; pd < m.d; ++pd)
        for (int ph = 0; ph < m.h; ++ph)
          for (int pw = 0; pw < m.w; ++pw) {
            if (!map_nan[m.index(n, c, pd, ph, pw)]) continue;
            for (int a = 0; a < wd; ++a)
              for (int b = 0; b < sc.window; ++b)
                for (int e = 0; e < sc.window; ++e) {
                  const int qd = pd + a - padd, qh = ph + b - pad, qw = pw + e - pad;
                  if (qd >= 0 && qd < s.d && qh >= 0 && qh < s.h && qw >= 0 && qw < s.w)
                    nan[s.index(n, c, qd, qh, qw)] = 1;
                }
          }
  for (const Pixel& b : sc.bad) nan[s.index(b.n, b.c, b.d, b.h, b.w)] = 1;
  return nan;
}

std::vector<Scenario> scenarios() {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Shape img{2, 2, 1, 24, 26, false};
  const Shape vol{1, 2, 13, 12, 14, true};
  std::vector<Scenario> v;
  for (bool same : {false, true}) {
    const std::string p = same ? " same" : " valid";
    v.push_back({"NaN in img1" + p, img, 7, same, {{0, 1, 0, 5, 17}}, nan, true, false});
    v.push_back({"NaN in img2" + p, img, 11, same, {{1, 0, 0, 12, 3}}, nan, false, true});
    v.push_back({"NaN in both" + p, img, 7, same, {{1, 1, 0, 20, 20}}, nan, true, true});
    v.push_back({"+Inf in img1" + p, img, 7, same, {{0, 0, 0, 9, 10}}, inf, true, false});
    v.push_back({"-Inf in img2" + p, img, 5, same, {{1, 1, 0, 0, 0}}, -inf, false, true});
    v.push_back({"two NaNs, corners" + p, img, 3, same, {{0, 0, 0, 0, 25}, {0, 0, 0, 23, 0}}, nan, true, false});
    // The recentring sample of a slice: its shift falls back to a neighbouring finite sample.
    v.push_back({"NaN at the recentring sample" + p, img, 7, same, {{0, 1, 0, 12, 13}}, nan, true, false});
    v.push_back({"+Inf at the recentring sample of both" + p, img, 7, same, {{1, 0, 0, 12, 13}}, inf, true, true});
    v.push_back({"3D NaN in img1" + p, vol, 5, same, {{0, 1, 4, 6, 7}}, nan, true, false});
    v.push_back({"3D -Inf at the recentring sample" + p, vol, 5, same, {{0, 0, 6, 6, 7}}, -inf, false, true});
  }
  return v;
}

template <class C, int Rank>
void check_scenario(const Scenario& sc) {
  using T = typename C::value_type;
  using Exec = typename C::execution_space;
  using Mem = typename C::memory_space;
  SCOPED_TRACE(sc.name);
  const Shape& s = sc.s;
  auto x = rounded<T>(random_image(s, 7001, sc.lo, sc.hi));
  auto y = rounded<T>(noisy_copy(x, 7002, 0.1 * (sc.hi - sc.lo)));
  y = rounded<T>(y);
  for (const Pixel& b : sc.bad) {
    if (sc.in_x) x[s.index(b.n, b.c, b.d, b.h, b.w)] = sc.value;
    if (sc.in_y) y[s.index(b.n, b.c, b.d, b.h, b.w)] = sc.value;
  }
  ReferenceOptions ro;
  ro.window = sc.window;
  ro.same = sc.same;
  const ReferenceResult ref = reference_ssim(s, x, y, ro, true);
  const Shape& m = ref.map_shape;
  const auto map_nan = expected_map_nan(sc, m);
  const auto grad_nan = expected_gradient_nan(sc, m, map_nan);
  const kssim::Options opts = to_options(ro);

  Exec exec;
  auto a = to_view<C, Rank>("a", s, x);
  auto b = to_view<C, Rank>("b", s, y);

  // The means.
  EXPECT_TRUE(std::isnan(kssim::ssim(exec, a, b, opts)));
  Kokkos::View<double, Mem> mean("mean");
  kssim::ssim(exec, a, b, mean, opts);
  double mean_host = 0;
  Kokkos::deep_copy(mean_host, mean);
  EXPECT_TRUE(std::isnan(mean_host));

  // The map: NaN exactly on the footprint, finite and correct elsewhere.
  auto map = make_view<C, Rank>("map", m);
  kssim::ssim_map(exec, a, b, map, opts);
  const auto got_map = from_view(map, m);
  double err = 0;
  const FootprintCounts map_counts = split_by_footprint(got_map, map_nan, [&](std::size_t i) {
    ASSERT_TRUE(std::isfinite(ref.map[i]));
    err = std::max(err, std::abs(got_map[i] - ref.map[i]));
  });
  EXPECT_EQ(map_counts.missing_nan, 0) << "map pixels covering a non-finite pixel that are not NaN";
  EXPECT_EQ(map_counts.wrong_nan, 0) << "non-finite map pixels outside the footprint";
  EXPECT_LE(err, map_tolerance<T>()) << "map error outside the footprint";

  // Per-image and per-channel means: NaN for the affected slices only.
  const PerSliceMeans got = per_slice_means(exec, a, b, opts);
  for (int n = 0; n < s.n; ++n) {
    if (std::isnan(ref.per_image[n]))
      EXPECT_TRUE(std::isnan(got.per_image[n])) << "image " << n;
    else
      EXPECT_NEAR(got.per_image[n], ref.per_image[n], value_tolerance<T>()) << "image " << n;
    for (int c = 0; c < s.c; ++c) {
      const std::size_t i = std::size_t(n) * s.c + c;
      if (std::isnan(ref.per_channel[i]))
        EXPECT_TRUE(std::isnan(got.per_channel[i])) << "slice " << n << ", " << c;
      else
        EXPECT_NEAR(got.per_channel[i], ref.per_channel[i], value_tolerance<T>()) << "slice " << n << ", " << c;
    }
  }

  // Gradients: NaN exactly where a NaN map pixel's window reaches, finite and correct elsewhere.
  auto g1 = make_view<C, Rank>("g1", s);
  auto g2 = make_view<C, Rank>("g2", s);
  EXPECT_TRUE(std::isnan(kssim::ssim_grad(exec, a, b, g1, g2, opts)));
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE(k == 0 ? "grad1" : "grad2");
    const auto got = from_view(k == 0 ? g1 : g2, s);
    const auto& want = k == 0 ? ref.grad1 : ref.grad2;
    std::vector<double> got_finite, want_finite;
    const FootprintCounts counts = split_by_footprint(got, grad_nan, [&](std::size_t i) {
      got_finite.push_back(got[i]);
      want_finite.push_back(want[i]);
    });
    EXPECT_EQ(counts.missing_nan, 0) << "gradient elements reached by a NaN map pixel that are not NaN";
    EXPECT_EQ(counts.wrong_nan, 0) << "non-finite gradient elements away from the footprint";
    EXPECT_LE(relative_l2_error(got_finite, want_finite), gradient_tolerance<T>());
    EXPECT_GT(got_finite.size(), got.size() / 2);  // most of the gradient is checked
  }

  // The training object agrees.
  const std::array<int, Rank> extents = object_extents<Rank>(s);
  kssim::SSIM<Exec, T, Rank> loss(exec, extents, opts);
  loss.forward(a, b);
  EXPECT_TRUE(std::isnan(loss.value_on_host()));
}

}  // namespace

TYPED_TEST(NonFinite, PropagatesToTheWindowFootprintOnly) {
  for (const Scenario& sc : scenarios()) {
    if (sc.s.volumetric)
      check_scenario<TypeParam, 5>(sc);
    else
      check_scenario<TypeParam, 4>(sc);
  }
}

// A non-finite recentring sample (the centre pixel) must not cost its slice the recentring: for data far
// from 0 (here [1000, 1001], L = 1) the shift 0 brings back the cancellation recentring exists to avoid,
// for every map pixel of the slice, not just the NaN's footprint (measured with the old fallback to 0:
// map errors outside the footprint of 3.8e+02 in float, 5.3e-09 in double). impl/stages/Recentring.hpp takes the
// nearest finite neighbour in row-major order instead, and past 64 of them a sample spread over the slice:
// "NaN centre rows" blanks 7 full rows (224 samples) around the centre, beyond the neighbour search.
template <class C, int Rank>
void check_far_from_zero(const Scenario& sc) {
  using T = typename C::value_type;
  SCOPED_TRACE(sc.name);
  const Shape& s = sc.s;
  auto x = rounded<T>(random_image(s, 7101, sc.lo, sc.hi));
  auto y = rounded<T>(noisy_copy(x, 7102, 0.1));
  for (const Pixel& b : sc.bad) {
    if (sc.in_x) x[s.index(b.n, b.c, b.d, b.h, b.w)] = sc.value;
    if (sc.in_y) y[s.index(b.n, b.c, b.d, b.h, b.w)] = sc.value;
  }
  ReferenceOptions ro;
  ro.window = sc.window;
  const ReferenceResult ref = reference_ssim(s, x, y, ro, false);
  const auto map_nan = expected_map_nan(sc, ref.map_shape);
  auto a = to_view<C, Rank>("a", s, x), b = to_view<C, Rank>("b", s, y);
  auto map = make_view<C, Rank>("map", ref.map_shape);
  kssim::ssim_map(typename C::execution_space(), a, b, map, to_options(ro));
  const auto got = from_view(map, ref.map_shape);
  double err = 0;
  int finite = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (map_nan[i]) {
      EXPECT_TRUE(std::isnan(got[i])) << "map pixel " << i;
      continue;
    }
    ASSERT_TRUE(std::isfinite(got[i])) << "map pixel " << i;
    err = std::max(err, std::abs(got[i] - ref.map[i]));
    ++finite;
  }
  EXPECT_GT(finite, 100);  // enough of the map is outside the footprint to check
  EXPECT_LE(err, map_tolerance<T>()) << "map error outside the footprint";
}

TYPED_TEST(NonFinite, NaNRecentringSampleFarFromZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Shape img{1, 1, 1, 32, 32, false};
  const Shape vol{1, 2, 12, 12, 12, true};
  std::vector<Pixel> centre_rows;
  for (int h = 13; h <= 19; ++h)
    for (int w = 0; w < img.w; ++w) centre_rows.push_back({0, 0, 0, h, w});
  check_far_from_zero<TypeParam, 4>(
      {"NaN at the recentring sample, data at 1000", img, 7, false, {{0, 0, 0, 16, 16}}, nan, true, false, 1000, 1001});
  check_far_from_zero<TypeParam, 4>(
      {"NaN centre rows in both, data at 1000", img, 7, false, centre_rows, nan, true, true, 1000, 1001});
  check_far_from_zero<TypeParam, 5>({"3D +Inf at the recentring sample of both, data at 1000", vol, 5, false,
                                     {{0, 1, 6, 6, 6}, {0, 1, 6, 6, 7}}, inf, true, true, 1000, 1001});
}
