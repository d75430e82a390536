// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The schedules and the router (include/kssim/impl/schedules/Router.hpp): every schedule against the float64
// reference on images of several tiles in both directions with ragged edges (the other tests' images fit
// in one host tile), the router's choices, and forced schedules it cannot honour.
#include "SSIMChecks.hpp"

#include <kssim/impl/stages/Reduction.hpp>

#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace kssim_test;

template <class C>
class Schedules : public ::testing::Test {};
TYPED_TEST_SUITE(Schedules, AllConfigs, ConfigNames);

// 150 x 141 spans 3 x 2 host tiles (64 rows x 128 columns) and 5 x 5 GPU tiles (32 x 32), with partial tiles
// at the edges.
TYPED_TEST(Schedules, EveryScheduleMatchesReferenceAcrossTiles) {
  const Shape s{1, 2, 1, 150, 141};
  unsigned seed = 500;
  for_both_paddings(
      [&](const ReferenceOptions& ro) { expect_noisy_pair_matches_reference<TypeParam, 4>(s, ro, seed, 0.1); });
}

// Rows of a multiple of 32 map pixels: on GPUs (and the gpu_paths runs of their code) the row-pass and
// partial-derivative planes then get 16 elements of pitch more than the map's width (row_pitched, Plan.hpp),
// which every pass must step over: every schedule against the float64 reference, values and gradients, with
// 128-wide images and volumes in same padding (the skew) and valid padding (none).
TYPED_TEST(Schedules, SkewedRowPitchMatchesReference) {
  using Exec = typename TypeParam::execution_space;
  using T = typename TypeParam::value_type;
  ReferenceOptions same_padding;
  same_padding.same = true;
  const auto same = kssim::impl::make_geometry<4>({1, 2, 70, 128}, to_options(same_padding));
  const int pitch = kssim::impl::row_pitched<Exec, T>(same).row_pitch;
  EXPECT_EQ(pitch, kssim::impl::gpu_code_paths_v<Exec> ? 128 + KSSIM_TUNE_ROW_PITCH_SKEW : 128);
  unsigned seed = 900;
  for_both_paddings([&](const ReferenceOptions& ro) {
    expect_noisy_pair_matches_reference<TypeParam, 4>(Shape{1, 2, 1, 70, 128}, ro, seed, 0.1);
    expect_noisy_pair_matches_reference<TypeParam, 5>(Shape{1, 1, 14, 20, 64, true}, ro, seed, 0.1);
  });
}

TYPED_TEST(Schedules, RouterPicksTheFusedSchedulesWhereTheyAreCompiled) {
  using Exec = typename TypeParam::execution_space;
  using T = typename TypeParam::value_type;
  Exec exec;
  const kssim::Options o;
  const kssim::impl::PartialPlanes one{true, false};
  const auto image = kssim::impl::make_geometry<4>({1, 3, 64, 64}, o);
  const auto volume = kssim::impl::make_geometry<5>({1, 1, 16, 16, 16}, o);
  const auto for_image = kssim::impl::choose_schedule<Exec, T>(exec, image, o, one);
  const auto for_volume = kssim::impl::choose_schedule<Exec, T>(exec, volume, o, one);
  // Every backend fits a float tile of the standard window; hosts fit double tiles as large. Volumes take the
  // slice-fused schedule where the backend has its kernels (hosts: always; GPUs: float, 11 taps).
  if (sizeof(T) == 4 || !kssim::impl::is_gpu_space_v<Exec>) {
    EXPECT_TRUE(for_image.fused_forward());
    EXPECT_TRUE(for_image.fused_backward());
  }
  const bool sliced = kssim::impl::fused_slices_compiled<Exec, T>(11);
  EXPECT_EQ(sliced, !kssim::impl::gpu_code_paths_v<Exec> || sizeof(T) == 4);
  EXPECT_EQ(for_volume.fused_forward(), sliced);
  EXPECT_EQ(for_volume.fused_backward(), sliced);
  EXPECT_FALSE(for_volume.fused_forward_finishes);  // the depth pass sums a volume's map
  kssim::Options seven = o;
  seven.window_size = 7;
  const auto volume_seven = kssim::impl::make_geometry<5>({1, 1, 16, 16, 16}, seven);
  const auto for_seven = kssim::impl::choose_schedule<Exec, T>(exec, volume_seven, seven, one);
  EXPECT_EQ(for_seven.fused_forward(), !kssim::impl::gpu_code_paths_v<Exec>);
  kssim::Options stages = o;
  stages.schedule = kssim::Schedule::Stages;
  for (const auto& g : {image, volume}) {
    const auto forced = kssim::impl::choose_schedule<Exec, T>(exec, g, stages, one);
    EXPECT_FALSE(forced.fused_forward());
    EXPECT_FALSE(forced.fused_backward());
  }
}

// Forcing the fused schedule on a volume whose window or type has no slice-fused kernel on this backend
// (GPUs: other than float with 11 taps) throws; where it has one, it runs.
TYPED_TEST(Schedules, ForcingFusedOnAVolumeThrowsWhereItHasNoKernel) {
  using Exec = typename TypeParam::execution_space;
  using T = typename TypeParam::value_type;
  kssim::Options o;
  o.schedule = kssim::Schedule::Fused;
  o.window_size = 7;
  if (kssim::impl::fused_slices_compiled<Exec, T>(7)) {
    const auto g = kssim::impl::make_geometry<5>({1, 1, 16, 16, 16}, o);
    EXPECT_TRUE((kssim::impl::choose_schedule<Exec, T>(Exec(), g, o, kssim::impl::PartialPlanes{}).fused_forward()));
    kssim::SSIM<Exec, T, 5> loss(Exec(), {1, 1, 16, 16, 16}, o);
    return;
  }
  try {
    kssim::SSIM<Exec, T, 5> loss(Exec(), {1, 1, 16, 16, 16}, o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fused schedule cannot run"), std::string::npos) << e.what();
  }
}

// The slice-fused schedule of volumes (schedules/FusedSlices.hpp) on slices of several tiles in both
// directions with ragged edges (host tiles 64 x 128, GPU tiles 32 x 32) and two (n, c) slices, with chains of
// tiles down each depth slice:
// the map and both gradients bit for bit the same for every chain, against the float64 reference at one, and
// the fused L1 + SSIM loss (its L1 sums per tile of every depth slice) against the stage schedule's.
TYPED_TEST(Schedules, SliceFusedVolumesMatchAcrossTilesAndChains) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  if (!kssim::impl::fused_slices_compiled<Exec, T>(11)) GTEST_SKIP() << "no slice-fused kernel for this type";
  for (const bool same : {false, true}) {
    // Two host tile rows in both paddings (70 map rows), two host tile columns in valid; as few voxels as that
    // allows (the float64 reference correlates with the whole 3D window).
    const Shape s = same ? Shape{1, 2, 3, 70, 132, true} : Shape{1, 2, 11, 80, 138, true};
    const auto in = rounded_noisy_views<C, 5>(s, 95, 0.1);
    ReferenceOptions ro;
    ro.same = same;
    kssim::Options o = to_options(ro);
    o.schedule = kssim::Schedule::Fused;
    const Shape ms{s.n, s.c, same ? s.d : s.d - 10, same ? s.h : s.h - 10, same ? s.w : s.w - 10, true};
    std::vector<double> first_map, first1, first2;
    double first_mean = 0;
    for (const auto& [forward_chain, backward_chain] :
         std::vector<std::pair<const char*, const char*>>{{"1", "1"}, {"2", "3"}, {"3", "2"}}) {
      const ScopedEnv forward_env("KSSIM_TUNE_FUSED_FORWARD_CHAIN", forward_chain);
      const ScopedEnv backward_env("KSSIM_TUNE_FUSED_BACKWARD_CHAIN", backward_chain);
      const auto g = kssim::impl::make_geometry<5>({s.n, s.c, s.d, s.h, s.w}, o);
      const auto choice = kssim::impl::choose_schedule<Exec, T>(Exec(), g, o, kssim::impl::PartialPlanes{true, true});
      ASSERT_TRUE(choice.fused_forward() && choice.fused_backward());
      kssim::SSIM<Exec, T, 5> loss(Exec(), {s.n, s.c, s.d, s.h, s.w}, o, kssim::Gradients::Both);
      auto map = make_view<C, 5>("map", ms);
      auto g1 = make_view<C, 5>("g1", s), g2 = make_view<C, 5>("g2", s);
      loss.forward(in.a, in.b, map);
      loss.backward(g1, g2);
      const std::string what = std::string("chains ") + forward_chain + "/" + backward_chain + (same ? " same" : " valid");
      if (first_map.empty()) {
        first_map = from_view(map, ms);
        first_mean = loss.value_on_host();
        first1 = from_view(g1, s);
        first2 = from_view(g2, s);
        expect_forward_matches_reference<C, 5>(s, ro, in.x, in.y, o);
        expect_gradients_match_reference<C, 5>(s, ro, in.x, in.y, o);
        continue;
      }
      EXPECT_EQ(from_view(map, ms), first_map) << what;
      EXPECT_EQ(loss.value_on_host(), first_mean) << what;
      EXPECT_EQ(from_view(g1, s), first1) << what;
      EXPECT_EQ(from_view(g2, s), first2) << what;
    }
    // The fused loss's L1 sums: the same loss as the stage schedule's, to rounding (other summation order).
    kssim::L1SSIMLossOptions lo;
    lo.ssim = o;
    lo.l1_weight = 0.25;
    const auto loss_with = [&](kssim::Schedule schedule) {
      lo.ssim.schedule = schedule;
      kssim::L1SSIMLoss<Exec, T, 5> l1_loss(Exec(), {s.n, s.c, s.d, s.h, s.w}, lo, kssim::Gradients::None);
      l1_loss.forward(in.a, in.b);
      return l1_loss.value_on_host();
    };
    EXPECT_NEAR(loss_with(kssim::Schedule::Fused), loss_with(kssim::Schedule::Stages), sizeof(T) == 4 ? 1e-6 : 1e-13);
  }
}

// The two schedules sum the map in different orders, so their means may differ by rounding, no more.
TYPED_TEST(Schedules, SchedulesAgreeToRounding) {
  const auto in = rounded_noisy_views<TypeParam>(Shape{2, 3, 1, 70, 97}, 77, 0.2);
  const auto mean_with = [&](kssim::Schedule schedule) {
    kssim::Options o;
    o.padding = kssim::Padding::Same;
    o.schedule = schedule;
    return kssim::ssim(typename TypeParam::execution_space(), in.a, in.b, o);
  };
  const double stages = mean_with(kssim::Schedule::Stages), fused = mean_with(kssim::Schedule::Fused);
  EXPECT_NEAR(stages, fused, sizeof(typename TypeParam::value_type) == 4 ? 1e-6 : 1e-13);
  EXPECT_EQ(fused, mean_with(kssim::Schedule::Fused));  // deterministic
}


// The fused forward's last team can add the tile sums into the mean itself (FusedForward::finish, chosen on
// GPUs for one-wave problems; forced here): the same tile sums in the same order (OrderedSum) as sum_map's,
// so the same mean, bit for bit, and the same fused L1 + SSIM loss; the team counter returns to zero, so a
// second call and a plan without it agree too. 14 slices of 1 to 4 tiles, and one slice of many.
TYPED_TEST(Schedules, FusedForwardFinishGivesTheSameMean) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  for (const Shape s : {Shape{7, 2, 1, 75, 140}, Shape{1, 1, 1, 100, 600}}) {
    const auto in = rounded_noisy_views<C>(s, 17, 0.1);
    for (bool same : {false, true}) {
      ReferenceOptions ro;
      ro.same = same;
      kssim::Options o = to_options(ro);
      o.schedule = kssim::Schedule::Fused;
      kssim::L1SSIMLossOptions lo;
      lo.ssim = o;
      lo.l1_weight = 0.25;
      const auto run = [&](const char* finish) {
        const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_FINISH", finish);
        const auto g = kssim::impl::make_geometry<4>({s.n, s.c, s.h, s.w}, o);
        const auto choice = kssim::impl::choose_schedule<Exec, T>(Exec(), g, o, kssim::impl::PartialPlanes{});
        EXPECT_EQ(choice.fused_forward_finishes, std::string(finish) == "1");  // the switch takes
        kssim::SSIM<Exec, T, 4> loss(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::None);
        kssim::L1SSIMLoss<Exec, T, 4> l1_loss(Exec(), {s.n, s.c, s.h, s.w}, lo, kssim::Gradients::None);
        loss.forward(in.a, in.b);
        l1_loss.forward(in.a, in.b);
        const std::array<double, 2> first{loss.value_on_host(), l1_loss.value_on_host()};
        loss.forward(in.a, in.b);
        l1_loss.forward(in.a, in.b);
        EXPECT_EQ(loss.value_on_host(), first[0]) << "second call, finish=" << finish;
        EXPECT_EQ(l1_loss.value_on_host(), first[1]) << "second call, finish=" << finish;
        return first;
      };
      const auto with = run("1"), without = run("0");
      EXPECT_EQ(with[0], without[0]) << (same ? "same" : "valid") << " " << s.n << "x" << s.c;
      EXPECT_EQ(with[1], without[1]) << (same ? "same" : "valid") << " " << s.n << "x" << s.c;
      EXPECT_TRUE(std::isfinite(with[0]) && with[0] > 0 && with[0] < 1);
      if (s.n > 1) {  // and against the float64 reference
        const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_FINISH", "1");
        expect_forward_matches_reference<C, 4>(s, ro, in.x, in.y, o);
      }
    }
  }
}

// sum_map adds each slice's tile sums in OrderedSum's order (Reduction.hpp), whatever the slice's size: strand p
// adds values p, p + strands, ... in that order, then groups of 32 strands, then the groups, then the slices.
// Slices of 1 to 10216 tiles (strands of 1 to 10 values, whole and partial groups), values spread over 12
// orders of magnitude and both signs, so that any other order changes the bits; checked against
// that order written out here, bit for bit, and the tile sums are consumed (NaN) afterwards. (The fused forward's
// last team sums several slices at once: the fused finish tests, FORWARD_FINISH=1.)
TYPED_TEST(Schedules, SumMapAddsTileSumsInTheOrderedSumOrder) {
  using Exec = typename TypeParam::execution_space;
  using Mem = typename Exec::memory_space;
  const auto ordered = [](const double* v, int n) {
    const int strands = n < 1024 ? n : 1024;
    double total = 0;
    for (int g0 = 0; g0 < strands; g0 += 32) {
      double group = 0;
      for (int p = g0; p < g0 + 32 && p < strands; ++p) {
        double strand = 0;
        for (int t = p; t < n; t += strands) strand += v[t];
        group += strand;
      }
      total += group;
    }
    return total;
  };
  std::mt19937_64 rng{2026};
  std::uniform_real_distribution<double> exponent(-6, 6), mantissa(-1, 1);
  const auto random_values = [&](std::size_t count) {
    std::vector<double> v(count);
    for (double& x : v) x = mantissa(rng) * std::pow(10.0, exponent(rng));
    return v;
  };
  const auto upload = [](const std::vector<double>& v, double* to) {
    Kokkos::View<double*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> device(to, v.size());
    Kokkos::deep_copy(device, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                  v.data(), v.size()));
  };
  const auto download = [](const double* from, std::size_t count) {
    std::vector<double> v(count);
    Kokkos::deep_copy(Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), count),
                      Kokkos::View<const double*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(from, count));
    return v;
  };
  // Per slice in OrderedSum's order, then the slices in order: what sum_map must give for tile sums `v`.
  const auto expect_sums = [&](const std::vector<double>& v, int images, int n, const double* slices, double* total) {
    const std::vector<double> got = download(slices, images);
    *total = 0;
    for (int i = 0; i < images; ++i) {
      const double expected = ordered(v.data() + std::size_t(i) * n, n);
      EXPECT_EQ(got[i], expected) << "slice " << i;
      *total += expected;
    }
  };
  const auto expect_consumed = [&](const double* tiles, std::size_t count) {
    for (const double v : download(tiles, count))
      if (!std::isnan(v)) {
        ADD_FAILURE() << "a tile sum not consumed";
        return;
      }
  };
  // Extra sums: 0 none, 1 L1 sums (another count: on their own) and weight sums (with the map's), 2 L1 sums as many
  // as the map's (with the map's: sum_slices_in_order's two arrays).
  for (const int extra : {0, 1, 2})
      for (const int n : {1, 31, 1024, 1025, 8 * 1024, 8 * 1024 + 3, 9 * 1024 + 1000}) {
        const bool with_l1 = extra > 0;
        SCOPED_TRACE(std::to_string(n) + " tile sums per slice" +
                     (extra == 1 ? ", with L1 and weight sums" : extra == 2 ? ", with as many L1 sums" : ""));
        const int images = n > 9 * 1024 ? 7 : 3, l1_n = extra == 2 ? n : n / 2 + 1;
        kssim::impl::MapSumStore<Mem> store(Exec(), images, n, 1.0, with_l1 ? l1_n : 0, 5.0);
        if (extra == 1) store.add_weights(Exec());
        store.arrays.l1.weight = 0.25;
        const auto values = random_values(std::size_t(images) * n);
        const auto l1 = random_values(std::size_t(images) * l1_n);
        auto weights = random_values(std::size_t(images) * n);
        for (double& w : weights) w = std::abs(w);
        upload(values, store.arrays.tile_sums);
        if (with_l1) upload(l1, store.arrays.l1.tile_sums);
        if (extra == 1) upload(weights, store.arrays.weights.tile_sums);
        kssim::impl::sum_map(Exec(), store.arrays);
        Exec().fence();
        double total = 0, l1_total = 0, weight_total = 0;
        expect_sums(values, images, n, store.arrays.image_sums, &total);
        EXPECT_EQ(download(store.arrays.total, 1)[0], total);
        expect_consumed(store.arrays.tile_sums, values.size());
        if (!with_l1) {
          EXPECT_EQ(download(store.arrays.mean, 1)[0], total / 1.0);
          continue;
        }
        expect_sums(l1, images, l1_n, store.arrays.l1.image_sums, &l1_total);
        EXPECT_EQ(download(store.arrays.l1.total, 1)[0], l1_total);
        expect_consumed(store.arrays.l1.tile_sums, l1.size());
        double mean = total / 1.0;
        if (extra == 1) {
          expect_sums(weights, images, n, store.arrays.weights.image_sums, &weight_total);
          EXPECT_EQ(download(store.arrays.weights.total, 1)[0], weight_total);
          expect_consumed(store.arrays.weights.tile_sums, weights.size());
          mean = total / weight_total;
        }
        EXPECT_EQ(download(store.arrays.mean, 1)[0], mean);
        // The sums above bit for bit; the loss's last line to rounding (4 ulps): a device compiler may contract
        // its multiply-adds (nvcc does, into a result one ulp away).
        EXPECT_DOUBLE_EQ(download(store.arrays.l1.loss, 1)[0], 0.25 * (l1_total / 5.0) + 0.75 * (1 - mean));
      }
}

// A forward that also writes the partial derivatives (gradients wanted) evaluates the same map, bit for bit, as
// one that does not (MapFormula.hpp: on GPUs both divide by the same hardware reciprocal of the denominator):
// PyTorch users compare fused_ssim's train=True and train=False values, and kssim promises the same answer.
TYPED_TEST(Schedules, MeanIsTheSameWithAndWithoutGradients) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  const Shape s{2, 3, 1, 70, 90};
  const auto in = rounded_noisy_views<C>(s, 23, 0.3);
  for (const kssim::Window window : {kssim::Window::Exact, kssim::Window::Float32})
    for (const bool same : {false, true}) {
      ReferenceOptions ro;
      ro.same = same;
      kssim::Options o = to_options(ro);
      o.window = window;
      kssim::SSIM<Exec, T, 4> plain(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::None);
      kssim::SSIM<Exec, T, 4> training(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::Image1);
      plain.forward(in.a, in.b);
      training.forward(in.a, in.b);
      EXPECT_EQ(plain.value_on_host(), training.value_on_host())
          << (same ? "same" : "valid") << (window == kssim::Window::Exact ? " exact" : " float32");
    }
}

// The problems of the chain tests below, each given to check(s, in, ro, o) with the fused schedule forced:
// 300 rows span 5 host tiles (64 rows) and 10 GPU tiles (32 rows), so chains of 3 and 8 end in a partial
// chain; 141 columns (image rows aligned to 4 bytes only) and 144 (every staged quad 16-byte aligned); both
// paddings.
template <class C, class Check>
void for_each_chain_problem(unsigned seed, const Check& check) {
  const std::pair<int, bool> cases[] = {{141, false}, {141, true}, {144, false}, {144, true}};  // width, same
  for (const auto& [width, same] : cases) {
    const Shape s{1, 2, 1, 300, width};
    const auto in = rounded_noisy_views<C>(s, seed, 0.1);
    ReferenceOptions ro;
    ro.same = same;
    kssim::Options o = to_options(ro);
    o.schedule = kssim::Schedule::Fused;
    check(s, in, ro, o);
  }
}

// The fused forward's chains (schedules/FusedForward.hpp, fused_forward_chain): a team of 1 to 8 tiles
// down a column carries the window's halo rows of moments from tile to tile instead of computing them
// again, which must not change a single map pixel. The mean only regroups its double sums.
TYPED_TEST(Schedules, FusedForwardChainsGiveTheSameMap) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  for_each_chain_problem<C>(91, [&](const Shape& s, const auto& in, const ReferenceOptions& ro,
                                    const kssim::Options& o) {
    const bool same = ro.same;
    const Shape ms{s.n, s.c, 1, same ? s.h : s.h - 10, same ? s.w : s.w - 10};
    std::vector<double> first_map;
    double first_mean = 0;
    for (const char* chain : {"1", "2", "3", "8"}) {
      const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_CHAIN", chain);
      kssim::SSIM<Exec, T, 4> loss(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::None);
      auto map = make_view<C, 4>("map", ms);
      loss.forward(in.a, in.b, map);
      const auto m = from_view(map, ms);
      const double mean = loss.value_on_host();
      if (first_map.empty()) {
        first_map = m;
        first_mean = mean;
        continue;
      }
      EXPECT_EQ(m, first_map) << "chain " << chain << (same ? " same" : " valid") << " width " << s.w;
      // Every tile leaves its own sum, added in tile order: the mean does not follow the chain either.
      EXPECT_EQ(mean, first_mean) << "chain " << chain << (same ? " same" : " valid") << " width " << s.w;
      if (std::string(chain) == "3") {
        expect_forward_matches_reference<C, 4>(s, ro, in.x, in.y, o);
        expect_gradients_match_reference<C, 4>(s, ro, in.x, in.y, o);
      }
    }
    // The fused L1 + SSIM loss: its L1 sums are per tile on hosts, while on GPUs each thread adds the L1 terms of
    // the pixels it stages over its chain (FusedForward::l1_items): the chain then regroups the L1 sum, the same
    // loss to rounding.
    constexpr bool l1_per_chain = kssim::impl::FusedForward<Exec, T>::l1_items;
    kssim::L1SSIMLossOptions lo;
    lo.ssim = o;
    lo.l1_weight = 0.25;
    double first_loss = 0;
    for (const char* chain : {"1", "3", "8"}) {
      const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_CHAIN", chain);
      kssim::L1SSIMLoss<Exec, T, 4> l1_loss(Exec(), {s.n, s.c, s.h, s.w}, lo, kssim::Gradients::None);
      l1_loss.forward(in.a, in.b);
      const double value = l1_loss.value_on_host();
      if (std::string(chain) == "1")
        first_loss = value;
      else if (l1_per_chain)
        EXPECT_NEAR(value, first_loss, 1e-12) << "L1 + SSIM, chain " << chain << (same ? " same" : " valid");
      else
        EXPECT_EQ(value, first_loss) << "L1 + SSIM, chain " << chain << (same ? " same" : " valid");
    }
  });
}

// Shorter fused-forward tiles (KSSIM_TUNE_FUSED_FORWARD_ROWS, tuning runs: smaller teams, long chains),
// down to tiles shorter than the window's halo, which fused_forward_chain never chains (a forced chain is
// ignored): the same map, bit for bit, as the default tiles, and the same gradients (the forward's partial
// derivatives); the mean only to rounding (other tiles' sums).
TYPED_TEST(Schedules, ShortFusedForwardTilesGiveTheSameMapAndGradients) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  for_each_chain_problem<C>(97, [&](const Shape& s, const auto& in, const ReferenceOptions& ro,
                                    const kssim::Options& o) {
    const bool same = ro.same;
    const Shape ms{s.n, s.c, 1, same ? s.h : s.h - 10, same ? s.w : s.w - 10};
    const auto run = [&](std::vector<double>& map, std::vector<double>& g1, std::vector<double>& g2) {
      kssim::SSIM<Exec, T, 4> loss(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::Both);
      auto m = make_view<C, 4>("map", ms);
      auto v1 = make_view<C, 4>("g1", s), v2 = make_view<C, 4>("g2", s);
      loss.forward(in.a, in.b, m);
      loss.backward(v1, v2);
      map = from_view(m, ms);
      g1 = from_view(v1, s);
      g2 = from_view(v2, s);
      return loss.value_on_host();
    };
    std::vector<double> map0, g10, g20;
    const double mean0 = run(map0, g10, g20);
    constexpr int col_rows = kssim::impl::FusedForward<Exec, T>::col_rows;
    int tile_heights = 0;
    for (const int rows : {col_rows, 2 * col_rows, 4 * col_rows}) {
      const std::string rows_text = std::to_string(rows);
      const ScopedEnv rows_env("KSSIM_TUNE_FUSED_FORWARD_ROWS", rows_text.c_str());
      if (kssim::impl::fused_forward_rows<Exec, T>(Exec(), 11) != rows) continue;  // taller than the scratch holds
      ++tile_heights;
      for (const char* chain : {"1", "5", "40"}) {
        const ScopedEnv chain_env("KSSIM_TUNE_FUSED_FORWARD_CHAIN", chain);
        const std::string what = "rows " + rows_text + ", chain " + chain + (same ? " same" : " valid") +
                                 " width " + std::to_string(s.w);
        if (rows < o.window_size - 1) {  // shorter than the halo: a forced chain is ignored (it would rerun chain 1)
          const auto g = kssim::impl::make_geometry<4>({s.n, s.c, s.h, s.w}, o);
          EXPECT_EQ((kssim::impl::fused_forward_chain<Exec, T>(Exec(), g, rows, false)), 1) << what;
          if (std::string(chain) != "1") continue;
        }
        std::vector<double> map, g1, g2;
        const double mean = run(map, g1, g2);
        EXPECT_EQ(map, map0) << what;
        EXPECT_EQ(g1, g10) << what;
        EXPECT_EQ(g2, g20) << what;
        EXPECT_NEAR(mean, mean0, 1e-12) << what;
      }
    }
    EXPECT_GE(tile_heights, 2);  // heights that fit the scratch ran: shorter than the halo (all of them on hosts)
  });
}

// The fused backward's chains (schedules/FusedBackward.hpp, fused_backward_chain): a team of 1 to 8 tiles
// down a column sets itself up once for all of them, which must not change a single gradient pixel, of SSIM
// (both images, accumulated onto a start) or of the fused L1 + SSIM loss.
TYPED_TEST(Schedules, FusedBackwardChainsGiveTheSameGradients) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  for_each_chain_problem<C>(93, [&](const Shape& s, const auto& in, const ReferenceOptions& ro,
                                    const kssim::Options& o) {
    const bool same = ro.same;
    const auto start = random_image(s, 94);
    kssim::L1SSIMLossOptions lo;
    lo.ssim = o;
    lo.l1_weight = 0.25;
    std::vector<double> first1, first2, first_l1;
    for (const char* chain : {"1", "2", "3", "8"}) {
      const ScopedEnv env("KSSIM_TUNE_FUSED_BACKWARD_CHAIN", chain);
      kssim::SSIM<Exec, T, 4> loss(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::Both);
      auto g1 = to_view<C>("g1", s, start);
      auto g2 = make_view<C>("g2", s);
      loss.forward(in.a, in.b);
      loss.backward(g1, g2, kssim::Accumulate::Yes);
      kssim::L1SSIMLoss<Exec, T, 4> l1_loss(Exec(), {s.n, s.c, s.h, s.w}, lo, kssim::Gradients::Image1);
      auto l1 = make_view<C>("l1", s);
      l1_loss.forward(in.a, in.b);
      l1_loss.backward(l1);
      const std::string what = std::string("chain ") + chain + (same ? " same" : " valid") + " width " +
                               std::to_string(s.w);
      if (first1.empty()) {
        first1 = from_view(g1, s);
        first2 = from_view(g2, s);
        first_l1 = from_view(l1, s);
        continue;
      }
      EXPECT_EQ(from_view(g1, s), first1) << what;
      EXPECT_EQ(from_view(g2, s), first2) << what;
      EXPECT_EQ(from_view(l1, s), first_l1) << "L1 + SSIM, " << what;
      if (std::string(chain) == "3") expect_gradients_match_reference<C, 4>(s, ro, in.x, in.y, o);
    }
  });
}

// The fused kernels split their league rank with IndexDivisor (a multiply and a shift): exact for every
// divisor shape (1, powers of two and their neighbours, large and random) and every rank up to 2^31.
TEST(IndexDivisor, QuotientEqualsDivision) {
  std::vector<int> divisors;
  for (int d = 1; d <= 1100; ++d) divisors.push_back(d);
  for (int k = 11; k <= 30; ++k)
    for (int e = -1; e <= 1; ++e) divisors.push_back((1 << k) + e);
  divisors.push_back(2147483647);
  unsigned seed = 77;
  const auto next = [&]() { return seed = seed * 1664525u + 1013904223u; };
  for (int i = 0; i < 300; ++i) divisors.push_back(int(next() >> 1) | 1);
  for (const int d : divisors) {
    const kssim::impl::IndexDivisor div = kssim::impl::make_index_divisor(d);
    const long long dd = d;  // the neighbours of d and 2d in 64 bits: d + 1 and 2d may pass INT_MAX
    std::vector<long long> ranks = {0, 1, dd - 1, dd, dd + 1, 2 * dd - 1, 2 * dd, 2147483646, 2147483647};
    for (int i = 0; i < 200; ++i) ranks.push_back(next() >> 1);
    for (int i = 0; i < 50; ++i) ranks.push_back(next() % 100000u);
    for (const long long n : ranks)
      if (n >= 0 && n <= 2147483647) ASSERT_EQ(div.quotient(int(n)), int(n / dd)) << n << " / " << d;
  }
  EXPECT_THROW(kssim::impl::make_index_divisor(0), std::invalid_argument);
}

// SSIM::forward_into writes the mean, rounded once to float, from the kernel that computes it (the PyTorch
// binding's float results): the same value as the double mean of value() rounded, for every schedule, with
// and without the fused forward's last-team finish, and for a problem split into pieces (Slabs.hpp).
TYPED_TEST(Schedules, ForwardIntoWritesTheMeanAsFloat) {
  using C = TypeParam;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  const Shape s{2, 3, 1, 70, 90};
  const auto in = rounded_noisy_views<C>(s, 29, 0.3);
  const auto check = [&](const kssim::Options& o, const std::string& what) {
    kssim::SSIM<Exec, T, 4> loss(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::None);
    const auto value = device_scalar<C>(-1.0f);  // must be overwritten
    loss.forward_into(in.a, in.b, value.data());
    const double mean = loss.value_on_host();
    float written = 0;
    Kokkos::deep_copy(written, value);
    EXPECT_EQ(written, float(mean)) << what;
    EXPECT_TRUE(mean > 0 && mean < 1) << what;
  };
  for (const bool same : {false, true}) {
    ReferenceOptions ro;
    ro.same = same;
    const std::string padding = same ? "same" : "valid";
    for (const kssim::Schedule schedule : {kssim::Schedule::Auto, kssim::Schedule::Stages, kssim::Schedule::Fused})
      for (const char* finish : {"0", "1"}) {
        const ScopedEnv env("KSSIM_TUNE_FUSED_FORWARD_FINISH", finish);
        kssim::Options o = to_options(ro);
        o.schedule = schedule;
        check(o, padding + " " + kssim::to_string(schedule) + " finish=" + finish);
      }
    kssim::Options o = to_options(ro);
    check(o, padding + " whole");
    // The stage schedule in a budget of one image's workspace: the problem runs in groups of images.
    o.schedule = kssim::Schedule::Stages;
    o.max_workspace_bytes = kssim::impl::Plan<Exec, T>::workspace_bytes(
        Exec(), kssim::impl::make_geometry<4>({1, s.c, s.h, s.w}, o), o, kssim::impl::PartialPlanes{});
    kssim::SSIM<Exec, T, 4> probe(Exec(), {s.n, s.c, s.h, s.w}, o, kssim::Gradients::None);
    ASSERT_GT(probe.pieces(), 1);  // the split happens
    check(o, padding + " in pieces");
  }
  kssim::SSIM<Exec, T, 4> loss(Exec(), {s.n, s.c, s.h, s.w}, kssim::Options{}, kssim::Gradients::None);
  EXPECT_THROW(loss.forward_into(in.a, in.b, nullptr), std::invalid_argument);
}
