// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SSIM (and every other metric but SSIMULACRA2) of 16-bit images (include/kssim/impl/core/Storage.hpp): inputs
// stored in 16 bits, statistics in float,
// maps and gradients rounded to 16 bits or kept in float. Every result against the float64 reference
// (ReferenceSSIM.hpp; masked SSIM: ReferenceMaskedSSIM.hpp) evaluated on the very 16-bit values the library
// reads:
//  - means, per-image and per-channel means, and float maps and gradients at the float bars (1e-6 for
//    values, 2e-5 for map pixels, 1e-5 relative L2 for gradients): only the statistics' float rounding
//    separates them from the reference;
//  - 16-bit maps and gradients within half a 16-bit spacing of the reference plus the float bar, pixel
//    by pixel (the rounding of a float result to the output type; below the smallest normal 16-bit
//    value the spacing is that of the subnormals).
// No finite differences here: a 16-bit input cannot carry a step small enough, and the reference's
// gradient is itself checked by finite differences (Test_Gradients2D.cpp).
//
// The tests are type-parameterized (TYPED_TEST_P): Test_HalfKokkosHalf.cpp and Test_HalfKokkosBHalf.cpp
// instantiate them for Kokkos' half_t and bhalf_t, Test_HalfHostTypes.cpp for the host compiler's _Float16
// and __bf16. Each 16-bit type's kernels cost minutes of nvcc: one unit per type builds side by side.
#pragma once

#include "ErrorRecord.hpp"
#include "ReferenceL1SSIMLoss.hpp"
#include "ReferenceMSSSIM.hpp"
#include "ReferenceMaskedSSIM.hpp"
#include "TestingUtilities.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

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
using KokkosHalfConfigsFor = PairFor<Exec, kssim::kokkos_half_t>;
template <class Exec>
using KokkosBHalfConfigsFor = PairFor<Exec, kssim::kokkos_bhalf_t>;
template <class Exec, class S>
using OnlyFor = std::conditional_t<usable_v<Exec, S>, ::testing::Types<HalfConfig<Exec, S, S>>, ::testing::Types<>>;
// The host compiler's types (the 16-bit host kernels are those units' longest compiles, every configuration a
// full set of kernels):
//  - the default program: _Float16 to 16-bit and float outputs, __bf16 to 16-bit outputs. A float output reads
//    the 16-bit images as a 16-bit output does and stores as float images do, so __bf16 to float would add only
//    the pairing (Kokkos' bhalf_t to float runs in GPU builds);
//  - the gpu_paths program (KSSIM_TEST_GPU_CODE_PATHS): _Float16 to _Float16, its GPU code paths (the packed 16-bit
//    loads and stores) being the same for both types and either output;
//  - the sanitizer build (KSSIM_TEST_ONE_CONFIG): _Float16 to _Float16 too. A float output's loads are the 16-bit
//    output's and its stores the float images' (the float configuration there), so the pair would add a second
//    set of kernels (the build's longest unit, 147 CPU-s under the sanitizers) for the pairing alone, which the
//    default program checks against the reference.
template <class Exec>
#if (defined(KSSIM_TEST_GPU_CODE_PATHS) || defined(KSSIM_TEST_ONE_CONFIG)) && KSSIM_HAS_HOST_FLOAT16
using HostHalfConfigsFor = OnlyFor<Exec, kssim::host_float16_t>;
#else
using HostHalfConfigsFor = typename Concat<PairFor<Exec, kssim::host_float16_t>, OnlyFor<Exec, kssim::host_bfloat16_t>>::type;
#endif

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

// Both gradients against the reference: float ones at the relative L2 bar (float's, or the metric's: `bar`);
// 16-bit ones pixel by pixel, within the float gradient's error (that bar times the largest gradient) plus the
// rounding to S.
template <class C>
void expect_gradients_match(const std::vector<double>& got1, const std::vector<double>& got2,
                            const std::vector<double>& want1, const std::vector<double>& want2,
                            double bar = gradient_tolerance<float>()) {
  record_error("grad_rel_l2", std::max(relative_l2_error(got1, want1), relative_l2_error(got2, want2)));
  if constexpr (std::is_same_v<typename C::output, float>) {
    EXPECT_LE(relative_l2_error(got1, want1), bar);
    EXPECT_LE(relative_l2_error(got2, want2), bar);
  } else {
    double largest = 0;
    for (double v : want1) largest = std::max(largest, std::abs(v));
    for (double v : want2) largest = std::max(largest, std::abs(v));
    const double float_bar = bar * largest;
    const double worst =
        std::max(worst_against_bound<C>(got1, want1, float_bar), worst_against_bound<C>(got2, want2, float_bar));
    EXPECT_LE(worst, 1.0) << "largest gradient error in units of its bound";
    record_error("grad_in_bounds", worst);
  }
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

// Those of masked SSIM's normalized statistics: the stages, and the fused forward for images (Router.hpp).
template <class C>
std::vector<kssim::Schedule> normalized_schedules(int rank) {
  using Exec = typename C::execution_space;
  std::vector<kssim::Schedule> s{kssim::Schedule::Stages};
  if (rank == 4 && kssim::impl::fused_normalized_rows<Exec, float>(Exec(), 11) > 0) s.push_back(kssim::Schedule::Fused);
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
    expect_gradients_match<C>(download(g1), download(g2), ref.grad1, ref.grad2);
  }
}

// The extents of images of shape s as a training object of Rank takes them.
template <class C, int Rank>
std::array<int, Rank> extents_of(const Shape& s) {
  if constexpr (Rank == 4)
    return {s.n, s.c, s.h, s.w};
  else
    return {s.n, s.c, s.d, s.h, s.w};
}

// Masked SSIM of 16-bit images and a 16-bit mask (values 0, 1 and between; one per channel or one broadcast over
// the channels) in one mode: the one-call functions (mean, per image, per channel, map, gradients) and the
// training object with every schedule of that mode against the masked reference on the rounded values.
template <class C, int Rank>
void check_masked_problem(const Shape& s, const ReferenceOptions& ro, kssim::MaskMode mode, int mask_channels,
                          unsigned seed) {
  using Exec = typename C::execution_space;
  using Mem = typename C::memory_space;
  using S = typename C::storage;
  using O = typename C::output;
  Exec exec;
  auto x = random_image(s, seed), y = noisy_copy(x, seed + 1, 0.1);
  Shape ms = s;
  ms.c = mask_channels;
  std::vector<double> m = random_image(ms, seed + 2);
  for (double& v : m) v = v < 0.2 ? 0.0 : v > 0.8 ? 1.0 : v;
  auto a = upload<S, C, Rank>("a", s, x);
  auto b = upload<S, C, Rank>("b", s, y);
  auto mask = upload<S, C, Rank>("mask", ms, m);
  const bool normalized = mode == kssim::MaskMode::Normalized;
  const MaskedReference ref = reference_masked_ssim(s, x, y, m, mask_channels, ro, normalized, true);
  const std::vector<kssim::Schedule> every = normalized ? normalized_schedules<C>(Rank) : schedules<C>(Rank);
  for (kssim::Schedule schedule : every) {
    kssim::Options o = to_options(ro);
    o.schedule = schedule;
    SCOPED_TRACE(describe(s, ro) + (normalized ? " normalized" : " weights") + ", mask channels " +
                 std::to_string(mask_channels) + ", " + kssim::to_string(schedule));
    const double mean = kssim::masked_ssim(exec, a, b, mask, mode, o);
    EXPECT_NEAR(mean, ref.mean, value_tolerance<float>());
    record_error("masked_mean_error", std::abs(mean - ref.mean));
    Kokkos::View<double*, Mem> per_image("per_image", s.n);
    Kokkos::View<double**, Kokkos::LayoutRight, Mem> per_channel("per_channel", s.n, s.c);
    kssim::masked_ssim_per_image(exec, a, b, mask, mode, per_image, o);
    kssim::masked_ssim_per_channel(exec, a, b, mask, mode, per_channel, o);
    EXPECT_LE(max_abs_error(download(per_image), ref.per_image), value_tolerance<float>());
    EXPECT_LE(max_abs_error(download(per_channel), ref.per_channel), value_tolerance<float>());

    auto map = make<O, C, Rank>("map", ref.map_shape);
    kssim::masked_ssim_map(exec, a, b, mask, mode, map, o);
    const double map_worst = worst_against_bound<C>(download(map), ref.map, map_tolerance<float>());
    EXPECT_LE(map_worst, 1.0) << "largest map error in units of its bound";
    record_error("masked_map_in_bounds", map_worst);

    auto g1 = make<O, C, Rank>("g1", s), g2 = make<O, C, Rank>("g2", s);
    EXPECT_NEAR(kssim::masked_ssim_grad(exec, a, b, mask, mode, g1, g2, o), ref.mean, value_tolerance<float>());
    expect_gradients_match<C>(download(g1), download(g2), ref.grad1, ref.grad2);

    kssim::MaskedSSIM<Exec, S, Rank, O> loss(exec, extents_of<C, Rank>(s), mode, o, kssim::Gradients::Both);
    loss.forward(a, b, mask);
    EXPECT_NEAR(loss.value_on_host(), ref.mean, value_tolerance<float>());
    auto t1 = make<O, C, Rank>("t1", s), t2 = make<O, C, Rank>("t2", s);
    loss.backward(t1, t2);
    expect_gradients_match<C>(download(t1), download(t2), ref.grad1, ref.grad2);
  }
  // The mask check reads 16-bit values too: one value of 1.5 (exact in both 16-bit types) is refused.
  std::vector<double> bad = m;
  bad[bad.size() / 2] = 1.5;
  auto bad_mask = upload<S, C, Rank>("bad_mask", ms, bad);
  EXPECT_THROW(kssim::masked_ssim(exec, a, b, bad_mask, mode), std::invalid_argument);
}

// Gradients accumulated onto `start` and scaled by `upstream` in a training object (rounded once, after the
// float sum) against start + upstream * want.
template <class C>
void expect_accumulated_match(const std::vector<double>& got, const std::vector<double>& start, double upstream,
                              const std::vector<double>& want, double bar) {
  double largest = 0;
  for (double v : want) largest = std::max(largest, std::abs(upstream * v));
  std::vector<double> sum(start.size());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = start[i] + upstream * want[i];
  const double worst = worst_against_bound<C>(got, sum, bar * largest);
  EXPECT_LE(worst, 1.0) << "largest accumulated gradient error in units of its bound";
  record_error("accumulated_in_bounds", worst);
}

// The fused L1 + SSIM loss of 16-bit images on every schedule: the one-call loss, both gradients, and the
// training object accumulating a scaled gradient, against the reference on the rounded values (its L1 term
// reads the 16-bit pixels, so pixels that round to equal values have sign 0 in both).
template <class C, int Rank>
void check_l1_loss_problem(const Shape& s, const ReferenceOptions& ro, unsigned seed) {
  using Exec = typename C::execution_space;
  using S = typename C::storage;
  using O = typename C::output;
  Exec exec;
  auto x = random_image(s, seed), y = noisy_copy(x, seed + 1, 0.1);
  auto a = upload<S, C, Rank>("a", s, x);
  auto b = upload<S, C, Rank>("b", s, y);
  const double weight = 0.8;
  const L1SsimReference ref = reference_l1_ssim(s, x, y, ro, weight);
  for (kssim::Schedule schedule : schedules<C>(Rank)) {
    kssim::L1SSIMLossOptions o{.ssim = to_options(ro), .l1_weight = weight};
    o.ssim.schedule = schedule;
    SCOPED_TRACE(describe(s, ro) + " l1 loss, " + kssim::to_string(schedule));
    const double loss = kssim::l1_ssim_loss(exec, a, b, o);
    EXPECT_NEAR(loss, ref.loss, value_tolerance<float>());
    record_error("l1_loss_error", std::abs(loss - ref.loss));
    auto g1 = make<O, C, Rank>("g1", s), g2 = make<O, C, Rank>("g2", s);
    EXPECT_NEAR(kssim::l1_ssim_loss_grad(exec, a, b, g1, g2, o), ref.loss, value_tolerance<float>());
    expect_gradients_match<C>(download(g1), download(g2), ref.grad1, ref.grad2);

    kssim::L1SSIMLoss<Exec, S, Rank, O> object(exec, extents_of<C, Rank>(s), o);
    object.forward(a, b);
    EXPECT_NEAR(object.value_on_host(), ref.loss, value_tolerance<float>());
    std::vector<double> start = random_image(s, seed + 2, -1e-4, 1e-4);
    auto acc = upload<O, C, Rank>("acc", s, start);
    object.backward(acc, {}, kssim::Accumulate::Yes, -0.5);
    expect_accumulated_match<C>(download(acc), start, -0.5, ref.grad1, gradient_tolerance<float>());
  }
}

// MS-SSIM of 16-bit images (two scales, a small window: a small problem): the one-call mean, per image and per
// channel, both gradients, and the training object accumulating a scaled gradient (computed in float, rounded
// once: msssim/FinestScale.hpp), against the reference on the rounded values at MS-SSIM's float bars.
template <class C, int Rank>
void check_ms_ssim_problem(const Shape& s, const ReferenceOptions& ro, unsigned seed) {
  using Exec = typename C::execution_space;
  using Mem = typename C::memory_space;
  using S = typename C::storage;
  using O = typename C::output;
  constexpr double value_bar = 1e-6, gradient_bar = 1e-4;  // MS-SSIM's float bars (Test_MSSSIM.cpp)
  Exec exec;
  auto x = random_image(s, seed), y = noisy_copy(x, seed + 1, 0.1);
  auto a = upload<S, C, Rank>("a", s, x);
  auto b = upload<S, C, Rank>("b", s, y);
  const std::vector<double> weights{0.4, 0.6};
  const MsSsimReference ref = reference_ms_ssim(s, x, y, ro, weights, true);
  kssim::MSSSIMOptions o;
  o.ssim = to_options(ro);
  o.weights = weights;
  SCOPED_TRACE(describe(s, ro) + " ms-ssim");
  const double mean = kssim::ms_ssim(exec, a, b, o);
  EXPECT_NEAR(mean, ref.mean, value_bar);
  record_error("ms_ssim_error", std::abs(mean - ref.mean));
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> per_channel("per_channel", s.n, s.c);
  kssim::ms_ssim_per_channel(exec, a, b, per_channel, o);
  EXPECT_LE(max_abs_error(download(per_channel), ref.per_slice), value_bar);
  auto g1 = make<O, C, Rank>("g1", s), g2 = make<O, C, Rank>("g2", s);
  EXPECT_NEAR(kssim::ms_ssim_grad(exec, a, b, g1, g2, o), ref.mean, value_bar);
  expect_gradients_match<C>(download(g1), download(g2), ref.grad1, ref.grad2, gradient_bar);

  kssim::MSSSIM<Exec, S, Rank, O> object(exec, extents_of<C, Rank>(s), o, kssim::Gradients::Both);
  object.forward(a, b);
  EXPECT_NEAR(object.value_on_host(), ref.mean, value_bar);
  std::vector<double> start = random_image(s, seed + 2, -1e-4, 1e-4);
  auto acc = upload<O, C, Rank>("acc", s, start);
  object.backward({}, acc, kssim::Accumulate::Yes, -0.5);
  expect_accumulated_match<C>(download(acc), start, -0.5, ref.grad2, gradient_bar);
}

}  // namespace

template <class C>
class Half : public ::testing::Test {};
TYPED_TEST_SUITE_P(Half);

// 2 x 2 x 41 x 150: odd height, two host tiles (64 x 128) along W and five GPU tiles (32 x 32), two images
// and channels.
TYPED_TEST_P(Half, ImagesMatchReferenceOnRoundedInputs) {
  const Shape s{2, 2, 1, 41, 150};
  unsigned seed = 900;
  for_both_paddings([&](const ReferenceOptions& ro) {
    check_problem<TypeParam, 4>(s, ro, seed);
    seed += 2;
  });
  ReferenceOptions reflect;  // the edges' 16-bit loads read the mirror image
  reflect.same = true;
  reflect.outside = Outside::Reflect;
  check_problem<TypeParam, 4>(s, reflect, seed);
}

TYPED_TEST_P(Half, VolumesMatchReferenceOnRoundedInputs) {
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
TYPED_TEST_P(Half, IdenticalImagesGiveExactlyOne) {
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
TYPED_TEST_P(Half, TrainingObjectAccumulatesThenRounds) {
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

namespace {

// A rank-4 LayoutStride View of `w` columns inside a LayoutRight parent of `parent_w` columns, starting
// at column `offset` of each row, `step` parent columns apart.
template <class V, class C>
using StridedView = Kokkos::View<V****, Kokkos::LayoutStride, typename C::memory_space>;
template <class V, class C>
StridedView<V, C> columns_of(const ViewOf<V, C, 4>& parent, int offset, int w, int step) {
  const int n = int(parent.extent(0)), c = int(parent.extent(1)), h = int(parent.extent(2));
  const std::size_t pw = parent.extent(3);
  const Kokkos::LayoutStride layout(n, c * h * pw, c, h * pw, h, pw, w, step);
  return StridedView<V, C>(parent.data() + offset, layout);
}

// A parent of (n, c, h, parent_w) holding `data` (rounded to V) at the columns columns_of selects and
// `fill` everywhere else.
template <class V, class C>
ViewOf<V, C, 4> parent_holding(const Shape& s, int parent_w, int offset, int step, const std::vector<double>& data,
                               double fill) {
  ViewOf<V, C, 4> parent("parent", s.n, s.c, s.h, parent_w);
  auto h = Kokkos::create_mirror_view(parent);
  for (std::size_t i = 0; i < h.size(); ++i) h.data()[i] = to_storage<V>(fill);
  std::size_t k = 0;
  for (int r = 0; r < s.n * s.c * s.h; ++r)
    for (int j = 0; j < s.w; ++j) h.data()[std::size_t(r) * parent_w + offset + j * step] = to_storage<V>(data[k++]);
  Kokkos::deep_copy(parent, h);
  return parent;
}

// What one problem gives: the mean, both gradients (overwritten, then accumulated onto `start`), and
// whether every element outside the gradients' columns kept its fill.
struct StridedResult {
  double mean = 0;
  std::vector<double> grad1, grad2, accumulated;
  bool fill_kept = true;
};

template <class C>
StridedResult run_strided(const Shape& s, const kssim::Options& o, const std::vector<double>& x,
                          const std::vector<double>& y, const std::vector<double>& start, int offset, int step) {
  using Exec = typename C::execution_space;
  using S = typename C::storage;
  using O = typename C::output;
  const int parent_w = offset + (s.w - 1) * step + 1 + 3;  // a few columns past the last one too
  const double nan = std::numeric_limits<double>::quiet_NaN(), fill = 7;
  // NaN around the images: any read outside their columns would show in every result.
  auto px = parent_holding<S, C>(s, parent_w, offset, step, x, nan);
  auto py = parent_holding<S, C>(s, parent_w, offset, step, y, nan);
  auto pg1 = parent_holding<O, C>(s, parent_w, offset, step, std::vector<double>(s.size(), 0), fill);
  auto pg2 = parent_holding<O, C>(s, parent_w, offset, step, std::vector<double>(s.size(), 0), fill);
  auto pacc = parent_holding<O, C>(s, parent_w, offset, step, start, fill);
  const auto a = columns_of<const S, C>(px, offset, s.w, step), b = columns_of<const S, C>(py, offset, s.w, step);
  const auto g1 = columns_of<O, C>(pg1, offset, s.w, step), g2 = columns_of<O, C>(pg2, offset, s.w, step);
  const auto acc = columns_of<O, C>(pacc, offset, s.w, step);
  StridedResult res;
  res.mean = kssim::ssim_grad(Exec(), a, b, g1, g2, o);
  kssim::SSIM<Exec, S, 4, O> loss(Exec(), {s.n, s.c, s.h, s.w}, o);
  loss.forward(a, b);
  loss.backward(acc, {}, kssim::Accumulate::Yes, -0.2);
  auto values = [&](const auto& parent) {
    const std::vector<double> all = download(parent);
    std::vector<double> v;
    for (int r = 0; r < s.n * s.c * s.h; ++r)
      for (int j = 0; j < parent_w; ++j) {
        const int col = j - offset;
        const double value = all[std::size_t(r) * parent_w + j];
        if (col >= 0 && col % step == 0 && col / step < s.w)
          v.push_back(value);
        else
          res.fill_kept = res.fill_kept && value == fill;
      }
    return v;
  };
  res.grad1 = values(pg1);
  res.grad2 = values(pg2);
  res.accumulated = values(pacc);
  return res;
}

}  // namespace

// Rows starting at every alignment (sub-views at column offsets 0-3 of an odd width) take the GPU code
// paths' packed 16-bit loads and stores (Packed16.hpp) where whole words fit, element by element
// elsewhere: the results must be bitwise those of a View with stride 2 (element by element only), and no
// element outside the Views' columns may be read (NaN there) or written.
TYPED_TEST_P(Half, EveryRowAlignmentGivesTheSameBits) {
  using C = TypeParam;
  const Shape s{1, 2, 1, 23, 141};  // 141 columns: odd, one interior row-blur tile (valid), five fused tiles
  const auto x = random_image(s, 980), y = noisy_copy(x, 981, 0.1);
  const auto start = random_image(s, 982, -1e-3, 1e-3);
  for (kssim::Schedule schedule : schedules<C>(4))
    for (kssim::Padding padding : {kssim::Padding::Valid, kssim::Padding::Same, kssim::Padding::Reflect}) {
      kssim::Options o;
      o.schedule = schedule;
      o.padding = padding;
      SCOPED_TRACE(std::string(kssim::to_string(schedule)) + " " + kssim::to_string(padding));
      const StridedResult want = run_strided<C>(s, o, x, y, start, 0, 2);
      EXPECT_TRUE(want.fill_kept);
      EXPECT_TRUE(std::isfinite(want.mean));
      for (int offset = 0; offset < 4; ++offset) {
        SCOPED_TRACE("column offset " + std::to_string(offset));
        const StridedResult got = run_strided<C>(s, o, x, y, start, offset, 1);
        EXPECT_EQ(got.mean, want.mean);
        EXPECT_TRUE(got.grad1 == want.grad1);
        EXPECT_TRUE(got.grad2 == want.grad2);
        EXPECT_TRUE(got.accumulated == want.accumulated);
        EXPECT_TRUE(got.fill_kept) << "an element outside the gradients' columns was written";
      }
    }
}


// Masked SSIM (MaskedSSIM.hpp) of 16-bit images and masks, both modes, a mask per channel and one for every
// channel, both paddings; 2 x 2 x 41 x 150 as above.
TYPED_TEST_P(Half, MaskedImagesMatchReferenceOnRoundedInputs) {
  const Shape s{2, 2, 1, 41, 150};
  unsigned seed = 1000;
  for (kssim::MaskMode mode : {kssim::MaskMode::Weights, kssim::MaskMode::Normalized})
    for_both_paddings([&](const ReferenceOptions& ro) {
      check_masked_problem<TypeParam, 4>(s, ro, mode, ro.same ? 1 : 2, seed);
      seed += 3;
    });
}

TYPED_TEST_P(Half, MaskedVolumesMatchReferenceOnRoundedInputs) {
  Shape s{1, 2, 11, 12, 13};
  s.volumetric = true;
  ReferenceOptions ro;
  ro.window = 5;
  unsigned seed = 1050;
  for (kssim::MaskMode mode : {kssim::MaskMode::Weights, kssim::MaskMode::Normalized})
    for (bool same : {false, true}) {
      ro.same = same;
      check_masked_problem<TypeParam, 5>(s, ro, mode, 1, seed);
      seed += 3;
    }
}

// The fused L1 + SSIM loss: 2 x 2 x 41 x 150 as above, both paddings; a volume.
TYPED_TEST_P(Half, L1LossMatchesReferenceOnRoundedInputs) {
  unsigned seed = 1100;
  for_both_paddings([&](const ReferenceOptions& ro) {
    check_l1_loss_problem<TypeParam, 4>(Shape{2, 2, 1, 41, 150}, ro, seed);
    seed += 3;
  });
  Shape v{1, 2, 9, 10, 11};
  v.volumetric = true;
  ReferenceOptions ro;
  ro.window = 5;
  ro.same = true;
  check_l1_loss_problem<TypeParam, 5>(v, ro, seed);
}

// MS-SSIM: two scales of an odd image (the pooling pads) and of a volume.
TYPED_TEST_P(Half, MsSsimMatchesReferenceOnRoundedInputs) {
  ReferenceOptions ro;
  ro.window = 7;
  check_ms_ssim_problem<TypeParam, 4>(Shape{2, 2, 1, 27, 40}, ro, 1150);
  Shape v{1, 2, 11, 12, 13};
  v.volumetric = true;
  ro.window = 5;
  check_ms_ssim_problem<TypeParam, 5>(v, ro, 1160);
}

REGISTER_TYPED_TEST_SUITE_P(Half, ImagesMatchReferenceOnRoundedInputs, VolumesMatchReferenceOnRoundedInputs,
                            IdenticalImagesGiveExactlyOne, TrainingObjectAccumulatesThenRounds,
                            EveryRowAlignmentGivesTheSameBits, MaskedImagesMatchReferenceOnRoundedInputs,
                            MaskedVolumesMatchReferenceOnRoundedInputs, L1LossMatchesReferenceOnRoundedInputs,
                            MsSsimMatchesReferenceOnRoundedInputs);
