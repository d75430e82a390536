// SSIM of 16-bit images (include/kssim/impl/Storage.hpp): inputs stored in 16 bits, statistics in float,
// maps and gradients rounded to 16 bits or kept in float. Every result against the float64 reference
// (ReferenceSSIM.hpp) evaluated on the very 16-bit values the library reads:
//  - means, per-image and per-channel means, and float maps and gradients at the float bars (1e-6 for
//    values, 2e-5 for map pixels, 1e-5 relative L2 for gradients): only the statistics' float rounding
//    separates them from the reference;
//  - 16-bit maps and gradients within half a 16-bit spacing of the reference plus the float bar, pixel
//    by pixel (the rounding of a float result to the output type; below the smallest normal 16-bit
//    value the spacing is that of the subnormals).
// No finite differences here: a 16-bit input cannot carry a step small enough, and the reference's
// gradient is itself checked by finite differences (Test_Gradients2D.cpp).
#include "ErrorRecord.hpp"
#include "TestingUtilities.hpp"

#include <algorithm>
#include <cmath>
#include <string>

using namespace kssim_test;

namespace {

template <class ExecSpace, class S, class O>
struct HalfConfig {
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using storage = S;  // the images' type
  using output = O;   // the maps' and gradients' type: S or float
};

// The 16-bit types a backend takes (none where the build has none), each with 16-bit and float outputs.
template <class Exec, class S>
inline constexpr bool usable_v =
    kssim::is_16bit_storage_v<S> && (!kssim::impl::is_host_16bit_v<S> || !kssim::impl::is_gpu_space_v<Exec>);
template <class Exec, class S>
using PairFor = std::conditional_t<usable_v<Exec, S>,
                                   ::testing::Types<HalfConfig<Exec, S, S>, HalfConfig<Exec, S, float>>,
                                   ::testing::Types<>>;
template <class Exec>
using HalfConfigsFor = typename Concat<PairFor<Exec, kssim::kokkos_half_t>, PairFor<Exec, kssim::kokkos_bhalf_t>,
                                       PairFor<Exec, kssim::host_float16_t>,
                                       PairFor<Exec, kssim::host_bfloat16_t>>::type;

struct HalfNames {
  template <class C>
  static std::string GetName(int) {
    using S = typename C::storage;
    return std::string(C::execution_space::name()) + "_" + kssim::impl::storage_name<S>() + "_to_" +
           kssim::impl::storage_name<typename C::output>();
  }
};

template <class S>
constexpr bool is_bfloat_v = std::string_view(kssim::impl::storage_name<S>()) == "bhalf";

// Half the spacing of S's values around magnitude a: the largest error of rounding a to S.
template <class S>
double half_spacing(double a) {
  constexpr int mantissa = is_bfloat_v<S> ? 7 : 10, min_exponent = is_bfloat_v<S> ? -126 : -14;
  const int e = a > 0 ? std::max(int(std::floor(std::log2(a))), min_exponent) : min_exponent;
  return std::ldexp(1.0, e - mantissa - 1);
}

template <class S>
S to_storage(double v) {
  return static_cast<S>(static_cast<float>(v));
}
template <class S>
double to_double(S v) {
  return double(static_cast<float>(v));
}

template <class V, class C, int Rank = 4>
using ViewOf = std::conditional_t<Rank == 4, Kokkos::View<V****, Kokkos::LayoutRight, typename C::memory_space>,
                                  Kokkos::View<V*****, Kokkos::LayoutRight, typename C::memory_space>>;

template <class V, class C, int Rank>
ViewOf<V, C, Rank> make(const std::string& label, const Shape& s) {
  if constexpr (Rank == 4)
    return ViewOf<V, C, Rank>(label, s.n, s.c, s.h, s.w);
  else
    return ViewOf<V, C, Rank>(label, s.n, s.c, s.d, s.h, s.w);
}

// The View of `data` rounded to V (LayoutRight: the reference's flat order), and the rounded values.
template <class V, class C, int Rank>
ViewOf<V, C, Rank> upload(const std::string& label, const Shape& s, std::vector<double>& data) {
  auto v = make<V, C, Rank>(label, s);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < data.size(); ++i) {
    h.data()[i] = to_storage<V>(data[i]);
    data[i] = to_double(h.data()[i]);
  }
  Kokkos::deep_copy(v, h);
  return v;
}

template <class View>
std::vector<double> download(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(h.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = to_double(h.data()[i]);
  return out;
}

// Every pixel of `got` (O) within the float bar of `want`, plus half a spacing of S when O is 16-bit.
// Returns the largest error in units of the bound (<= 1 passes).
template <class C>
double worst_against_bound(const std::vector<double>& got, const std::vector<double>& want, double float_bar) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double bound = float_bar;
    if constexpr (!std::is_same_v<typename C::output, float>)
      bound += half_spacing<typename C::storage>(std::abs(want[i]) + float_bar);
    worst = std::max(worst, std::abs(got[i] - want[i]) / bound);
  }
  return worst;
}

template <class C>
std::vector<kssim::Schedule> schedules(int rank) {
  using Exec = typename C::execution_space;
  std::vector<kssim::Schedule> s{kssim::Schedule::Stages};
  if (rank == 4 && kssim::impl::fused_forward_rows<Exec, float>(Exec(), 11) > 0 &&
      kssim::impl::fused_backward_rows<Exec, float, 4>(Exec(), 11) > 0)
    s.push_back(kssim::Schedule::Fused);
  return s;
}

// Forward (mean, per image, per channel, map) and both gradients of one problem against the reference.
template <class C, int Rank>
void check_problem(const Shape& s, const ReferenceOptions& ro, unsigned seed) {
  using Exec = typename C::execution_space;
  using S = typename C::storage;
  using O = typename C::output;
  Exec exec;
  auto x = random_image(s, seed), y = noisy_copy(x, seed + 1, 0.1);
  const std::vector<double> unrounded = reference_ssim(s, x, y, ro, false).map;
  auto a = upload<S, C, Rank>("a", s, x);
  auto b = upload<S, C, Rank>("b", s, y);
  const ReferenceResult ref = reference_ssim(s, x, y, ro, true);
  // The test can fail: the 16-bit rounding of the inputs moves map pixels by far more than the float bar
  // (the mean hardly moves: the rounding errors average out over the map).
  EXPECT_GT(max_abs_error(unrounded, ref.map), 2 * map_tolerance<float>());
  for (kssim::Schedule schedule : schedules<C>(Rank)) {
    kssim::Options o = to_options(ro);
    o.schedule = schedule;
    SCOPED_TRACE(describe(s, ro) + " " + kssim::to_string(schedule));
    const double mean = kssim::ssim(exec, a, b, o);
    EXPECT_NEAR(mean, ref.mean, value_tolerance<float>());
    record_error("mean_error", std::abs(mean - ref.mean));
    const PerSliceMeans slices = per_slice_means(exec, a, b, o);
    EXPECT_LE(max_abs_error(slices.per_image, ref.per_image), value_tolerance<float>());
    EXPECT_LE(max_abs_error(slices.per_channel, ref.per_channel), value_tolerance<float>());

    auto map = make<O, C, Rank>("map", ref.map_shape);
    kssim::ssim_map(exec, a, b, map, o);
    const double map_worst = worst_against_bound<C>(download(map), ref.map, map_tolerance<float>());
    EXPECT_LE(map_worst, 1.0) << "largest map error in units of its bound";
    record_error("map_in_bounds", map_worst);

    auto g1 = make<O, C, Rank>("g1", s), g2 = make<O, C, Rank>("g2", s);
    const double with_grad = kssim::ssim_grad(exec, a, b, g1, g2, o);
    EXPECT_NEAR(with_grad, ref.mean, value_tolerance<float>());
    const std::vector<double> got1 = download(g1), got2 = download(g2);
    if constexpr (std::is_same_v<O, float>) {
      EXPECT_LE(relative_l2_error(got1, ref.grad1), gradient_tolerance<float>());
      EXPECT_LE(relative_l2_error(got2, ref.grad2), gradient_tolerance<float>());
      record_error("grad_rel_l2", std::max(relative_l2_error(got1, ref.grad1), relative_l2_error(got2, ref.grad2)));
    } else {
      // Pixel by pixel: the float gradient's error (its relative L2 bar times the largest gradient),
      // plus the rounding to S.
      double largest = 0;
      for (double v : ref.grad1) largest = std::max(largest, std::abs(v));
      for (double v : ref.grad2) largest = std::max(largest, std::abs(v));
      const double float_bar = gradient_tolerance<float>() * largest;
      const double worst =
          std::max(worst_against_bound<C>(got1, ref.grad1, float_bar), worst_against_bound<C>(got2, ref.grad2, float_bar));
      EXPECT_LE(worst, 1.0) << "largest gradient error in units of its bound";
      record_error("grad_in_bounds", worst);
      record_error("grad_rel_l2", std::max(relative_l2_error(got1, ref.grad1), relative_l2_error(got2, ref.grad2)));
    }
  }
}

}  // namespace

template <class C>
class Half : public ::testing::Test {};
using HalfConfigs = EveryBackend<HalfConfigsFor>;
TYPED_TEST_SUITE(Half, HalfConfigs, HalfNames);

// 2 x 2 x 41 x 150: odd height, two host tiles (64 x 128) along W and five GPU tiles (32 x 32), two images
// and channels.
TYPED_TEST(Half, ImagesMatchReferenceOnRoundedInputs) {
  const Shape s{2, 2, 1, 41, 150};
  unsigned seed = 900;
  for (bool same : {false, true}) {
    ReferenceOptions ro;
    ro.same = same;
    check_problem<TypeParam, 4>(s, ro, seed);
    seed += 2;
  }
}

TYPED_TEST(Half, VolumesMatchReferenceOnRoundedInputs) {
  Shape s{1, 2, 13, 14, 15};
  s.volumetric = true;
  ReferenceOptions ro;
  ro.window = 7;
  for (bool same : {false, true}) {
    ro.same = same;
    check_problem<TypeParam, 5>(s, ro, 950);
  }
}

// The same 16-bit images convert to the same floats, so the map is exactly 1 everywhere, as for float.
TYPED_TEST(Half, IdenticalImagesGiveExactlyOne) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  const Shape s{1, 3, 1, 33, 40};
  auto x = random_image(s, 960, -2, 5);
  auto a = upload<typename C::storage, C, 4>("a", s, x);
  for (kssim::Schedule schedule : schedules<C>(4))
    for (kssim::Padding padding : {kssim::Padding::Valid, kssim::Padding::Same}) {
      kssim::Options o;
      o.schedule = schedule;
      o.padding = padding;
      o.data_range = 7;
      EXPECT_EQ(kssim::ssim(Exec(), a, a, o), 1.0);
      const Shape m = padding == kssim::Padding::Same ? s : Shape{1, 3, 1, 23, 30};
      auto map = make<typename C::output, C, 4>("map", m);
      kssim::ssim_map(Exec(), a, a, map, o);
      for (double v : download(map)) ASSERT_EQ(v, 1.0);
    }
}

// The training object: gradients accumulated onto 16-bit values and scaled by an upstream factor are
// rounded once, after the float sum.
TYPED_TEST(Half, TrainingObjectAccumulatesThenRounds) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using S = typename C::storage;
  using O = typename C::output;
  const Shape s{1, 2, 1, 29, 38};
  auto x = random_image(s, 970), y = noisy_copy(x, 971, 0.15);
  auto a = upload<S, C, 4>("a", s, x);
  auto b = upload<S, C, 4>("b", s, y);
  const ReferenceResult ref = reference_ssim(s, x, y, ReferenceOptions{}, true);
  double largest = 0;
  for (double v : ref.grad1) largest = std::max(largest, std::abs(v));
  std::vector<double> start = random_image(s, 972, -largest, largest);
  auto grad = upload<O, C, 4>("grad", s, start);
  kssim::SSIM<Exec, S, 4, O> loss(Exec(), {s.n, s.c, s.h, s.w});
  loss.forward(a, b);
  EXPECT_NEAR(loss.value_on_host(), ref.mean, value_tolerance<float>());
  const double upstream = -0.2;
  loss.backward(grad, {}, kssim::Accumulate::Yes, upstream);
  std::vector<double> want(start.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = start[i] + upstream * ref.grad1[i];
  const double worst = worst_against_bound<C>(download(grad), want, gradient_tolerance<float>() * largest);
  EXPECT_LE(worst, 1.0) << "largest error in units of its bound";
  record_error("accumulated_in_bounds", worst);
}
