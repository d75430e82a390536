// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Shared test helpers: the typed-test parameter lists (execution space x value type x layout), host
// images <-> Views of any layout, random data, and error measures.

#include "KernelInstances.hpp"
#include "ReferenceSSIM.hpp"

#include <gtest/gtest.h>
#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kssim_test {

template <class ExecSpace, class T, class Layout>
struct Config {
  using execution_space = ExecSpace;
  using value_type = T;
  using layout = Layout;
  using memory_space = typename ExecSpace::memory_space;
};

// Every enabled backend, both value types, both common layouts. With KSSIM_TEST_ONE_CONFIG (the sanitizer
// build, CMakePresets.json "asan"), float/LayoutRight only: contiguous rows, the host kernels' fast paths,
// through every metric, schedule and split. The sanitizers look for memory and undefined-behaviour errors;
// the strided paths run under them in the reliability harness (float and double, LayoutStride), and the
// default build runs all four configurations against the references. Under ASan + UBSan two configurations
// took 500 of the asan section's 780 test-seconds on 2 cores, its long pole (CTest's times, the three shards);
// with one, `ctest --preset asan` took 249 s instead of 326-392.
// With KSSIM_TEST_GPU_CODE_PATHS (the gpu_paths program, which runs the GPU kernel variants on the host), two:
// float in both layouts (contiguous rows take the fast paths, strided ones the general paths of the fixed-tap
// kernels GPUs compile for float). double's GPU code is the same templates as float's run-time-tap kernels at
// another width; it runs on GPUs in every device run (all four configurations), and its host paths in the
// default program. double in LayoutRight there took 39 of the program's 137 test-seconds in CI and a third of
// its typed tests' compile (and its own kernel instances, 52 CPU-s).
template <class ExecSpace>
#if defined(KSSIM_TEST_ONE_CONFIG)
using ConfigsFor = ::testing::Types<Config<ExecSpace, float, Kokkos::LayoutRight>>;
#elif defined(KSSIM_TEST_GPU_CODE_PATHS)
using ConfigsFor = ::testing::Types<Config<ExecSpace, float, Kokkos::LayoutRight>, Config<ExecSpace, float, Kokkos::LayoutLeft>>;
#else
using ConfigsFor = ::testing::Types<Config<ExecSpace, float, Kokkos::LayoutRight>, Config<ExecSpace, double, Kokkos::LayoutRight>,
                                    Config<ExecSpace, float, Kokkos::LayoutLeft>, Config<ExecSpace, double, Kokkos::LayoutLeft>>;
#endif

template <class... Lists>
struct Concat;
template <class... A>
struct Concat<::testing::Types<A...>> {
  using type = ::testing::Types<A...>;
};
template <class... A, class... B, class... Rest>
struct Concat<::testing::Types<A...>, ::testing::Types<B...>, Rest...> {
  using type = typename Concat<::testing::Types<A..., B...>, Rest...>::type;
};

// One list of every backend the tests run (TestBackends.hpp), each contributing ListFor<ExecSpace>.
template <template <class> class ListFor>
using EveryBackend = typename Concat<
#if KSSIM_TEST_WITH_SERIAL
    ListFor<Kokkos::Serial>,
#endif
#if KSSIM_TEST_WITH_OPENMP
    ListFor<Kokkos::OpenMP>,
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    ListFor<Kokkos::Cuda>,
#endif
#if defined(KOKKOS_ENABLE_HIP)
    ListFor<Kokkos::HIP>,
#endif
    ::testing::Types<>>::type;

using AllConfigs = EveryBackend<ConfigsFor>;

// Every enabled backend with both value types, one layout: for tests where the layout plays no part (the gpu_paths
// program: float only, as above).
template <class ExecSpace>
#if defined(KSSIM_TEST_GPU_CODE_PATHS)
using SpaceAndTypeFor = ::testing::Types<Config<ExecSpace, float, Kokkos::LayoutRight>>;
#else
using SpaceAndTypeFor = ::testing::Types<Config<ExecSpace, float, Kokkos::LayoutRight>, Config<ExecSpace, double, Kokkos::LayoutRight>>;
#endif
using SpaceAndTypeConfigs = EveryBackend<SpaceAndTypeFor>;

struct ConfigNames {
  template <class C>
  static std::string GetName(int) {
    std::string s = C::execution_space::name();
    s += std::is_same_v<typename C::value_type, float> ? "_float" : "_double";
    s += std::is_same_v<typename C::layout, Kokkos::LayoutRight> ? "_right" : "_left";
    return s;
  }
};

// Tolerances: mean SSIM (absolute), map pixels (absolute), gradients (relative L2 error). Float: the
// project's standard. Double: about 100x the worst error the reliability harness measured over 4344 runs
// per backend (kssim_reliability --mode all --seed 20261130, OpenMP here and Cuda on an H200, 2026-11-30):
// means 3.1e-15, map pixels 1.6e-14, gradients 2.0e-13 (cases whose data sit far from zero, where the
// inputs themselves carry less relative precision, get a measured slack: reliability/Cases.hpp).
template <class T>
constexpr double value_tolerance() {
  return std::is_same_v<T, float> ? 1e-6 : 3e-13;
}
template <class T>
constexpr double map_tolerance() {
  return std::is_same_v<T, float> ? 20 * value_tolerance<T>() : 1.5e-12;
}
template <class T>
constexpr double gradient_tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 2e-11;
}

inline std::vector<double> random_image(const Shape& s, unsigned seed, double lo = 0, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(s.size());
  for (double& x : v) x = u(rng);
  return v;
}

// y = x + noise, a typical "distorted copy".
inline std::vector<double> noisy_copy(const std::vector<double>& x, unsigned seed, double amplitude) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, amplitude);
  std::vector<double> y(x);
  for (double& v : y) v += nd(rng);
  return y;
}

// check(ro) in both paddings: `base` with valid padding, then with same padding.
template <class Check>
void for_both_paddings(const Check& check, ReferenceOptions base = {}) {
  for (bool same : {false, true}) {
    base.same = same;
    check(base);
  }
}

// A random image in [0, range) (seed) and a noisy copy of it (seed + 1, amplitude); seed moves on by 2.
inline std::pair<std::vector<double>, std::vector<double>> next_noisy_pair(const Shape& s, unsigned& seed,
                                                                           double range, double amplitude) {
  auto x = random_image(s, seed++, 0, range);
  auto y = noisy_copy(x, seed++, amplitude);
  return {std::move(x), std::move(y)};
}

// Values as stored in T and read back, so the reference sees exactly what the library sees.
template <class T>
std::vector<double> rounded(std::vector<double> v) {
  for (double& x : v) x = double(T(x));
  return v;
}

template <class C, int Rank = 4>
using ImageView = std::conditional_t<Rank == 4,
                                     Kokkos::View<typename C::value_type****, typename C::layout, typename C::memory_space>,
                                     Kokkos::View<typename C::value_type*****, typename C::layout, typename C::memory_space>>;

// The extents a training object of rank Rank takes for images of shape s: (N, C, H, W) or (N, C, D, H, W).
template <int Rank>
std::array<int, Rank> object_extents(const Shape& s) {
  if constexpr (Rank == 4)
    return {s.n, s.c, s.h, s.w};
  else
    return {s.n, s.c, s.d, s.h, s.w};
}

template <class C, int Rank = 4>
ImageView<C, Rank> make_view(const std::string& label, const Shape& s) {
  if constexpr (Rank == 4)
    return ImageView<C, Rank>(label, s.n, s.c, s.h, s.w);
  else
    return ImageView<C, Rank>(label, s.n, s.c, s.d, s.h, s.w);
}

template <class C, int Rank = 4>
ImageView<C, Rank> to_view(const std::string& label, const Shape& s, const std::vector<double>& data) {
  auto v = make_view<C, Rank>(label, s);
  auto h = Kokkos::create_mirror_view(v);
  for_each_pixel(s, [&](int n, int c, int d, int i, int j) {
    const auto value = typename C::value_type(data[s.index(n, c, d, i, j)]);
    if constexpr (Rank == 4)
      h(n, c, i, j) = value;
    else
      h(n, c, d, i, j) = value;
  });
  Kokkos::deep_copy(v, h);
  return v;
}

// The inputs most tests take: a random image x (seed) and a noisy copy y of it (seed + 1, amplitude), and
// their Views a and b.
template <class C, int Rank = 4>
struct ImagePair {
  std::vector<double> x, y;
  ImageView<C, Rank> a, b;
};

template <class C, int Rank = 4>
ImagePair<C, Rank> noisy_views(const Shape& s, unsigned seed, double amplitude) {
  ImagePair<C, Rank> p{random_image(s, seed), {}, {}, {}};
  p.y = noisy_copy(p.x, seed + 1, amplitude);
  p.a = to_view<C, Rank>("a", s, p.x);
  p.b = to_view<C, Rank>("b", s, p.y);
  return p;
}

// The same, with x and y as stored in T (y the noisy copy of the stored x), for the float64 reference.
template <class C, int Rank = 4>
ImagePair<C, Rank> rounded_noisy_views(const Shape& s, unsigned seed, double amplitude) {
  using T = typename C::value_type;
  ImagePair<C, Rank> p{rounded<T>(random_image(s, seed)), {}, {}, {}};
  p.y = rounded<T>(noisy_copy(p.x, seed + 1, amplitude));
  p.a = to_view<C, Rank>("a", s, p.x);
  p.b = to_view<C, Rank>("b", s, p.y);
  return p;
}

// A rank-0 device View holding `value` (an upstream factor), staged through a host View: Kokkos'
// deep_copy(view, value) runs its fill kernel, which holds a View (include/kssim/impl/core/KernelArrays.hpp
// explains the hazard; under Kokkos develop's mdspan View on CUDA it left the value 0 or wrote out of bounds).
template <class C, class F = double>
Kokkos::View<F, typename C::memory_space> device_scalar(F value) {
  Kokkos::View<F, typename C::memory_space> v("scalar");
  Kokkos::deep_copy(v, Kokkos::View<const F, Kokkos::HostSpace>(&value));
  return v;
}

// Sets an environment variable for one scope (the tuning overrides are read when a plan is made).
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

template <class View>
std::vector<double> from_view(const View& v, const Shape& s) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(s.size());
  for_each_pixel(s, [&](int n, int c, int d, int i, int j) {
    if constexpr (View::rank() == 4)
      out[s.index(n, c, d, i, j)] = h(n, c, i, j);
    else
      out[s.index(n, c, d, i, j)] = h(n, c, d, i, j);
  });
  return out;
}

inline double relative_l2_error(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

inline double max_abs_error(const std::vector<double>& got, const std::vector<double>& want) {
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i) e = std::max(e, std::abs(got[i] - want[i]));
  return e;
}

inline kssim::Options to_options(const ReferenceOptions& r) {
  kssim::Options o;
  o.window_size = r.window;
  o.sigma = r.sigma;
  o.k1 = r.k1;
  o.k2 = r.k2;
  o.data_range = r.data_range;
  o.padding = !r.same                         ? kssim::Padding::Valid
              : r.outside == Outside::Reflect   ? kssim::Padding::Reflect
              : r.outside == Outside::Replicate ? kssim::Padding::Replicate
                                                : kssim::Padding::Same;
  o.window = r.float32_window ? kssim::Window::Float32 : kssim::Window::Exact;
  return o;
}

// Every schedule the router can pick for this problem (Router.hpp), forced in turn: the stage schedule always,
// the fused schedules where their tiles fit this backend (with both gradients: the largest tile) and, for
// volumes, where the backend has the slice-fused kernels (FusedSlices.hpp).
template <class C, int Rank>
std::vector<kssim::Schedule> schedules_for(const kssim::Options& o) {
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  std::vector<kssim::Schedule> s{kssim::Schedule::Stages};
  if ((Rank == 4 || kssim::impl::fused_slices_compiled<Exec, T>(o.window_size)) &&
      kssim::impl::fused_forward_rows<Exec, T>(Exec(), o.window_size) > 0 &&
      kssim::impl::fused_backward_rows<Exec, T, 4>(Exec(), o.window_size) > 0)
    s.push_back(kssim::Schedule::Fused);
  return s;
}

// The schedules of masked SSIM with normalized statistics (choose_normalized_forward, Router.hpp): the stage
// schedule always, the fused forward for images whose tile fits this backend.
template <class C, int Rank>
std::vector<kssim::Schedule> normalized_schedules_for(const kssim::Options& o) {
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  std::vector<kssim::Schedule> s{kssim::Schedule::Stages};
  if (Rank == 4 && kssim::impl::fused_normalized_rows<Exec, T>(Exec(), o.window_size) > 0)
    s.push_back(kssim::Schedule::Fused);
  return s;
}

inline std::string describe(const Shape& s, const ReferenceOptions& o) {
  std::ostringstream os;
  os << "shape (" << s.n << ", " << s.c << ", " << (s.volumetric ? std::to_string(s.d) + ", " : "") << s.h << ", "
     << s.w << ") window " << o.window << " sigma " << o.sigma << " L " << o.data_range
     << (!o.same                            ? " valid"
         : o.outside == Outside::Reflect   ? " reflect"
         : o.outside == Outside::Replicate ? " replicate"
                                           : " same")
     << (o.float32_window ? " float32 window" : "");
  return os.str();
}

// kssim::ssim_per_image and kssim::ssim_per_channel of (a, b), copied to the host in the reference's order:
// per_image[n], per_channel[n * C + c].
struct PerSliceMeans {
  std::vector<double> per_image, per_channel;
};

template <class ExecSpace, class ViewA, class ViewB>
PerSliceMeans per_slice_means(const ExecSpace& exec, const ViewA& a, const ViewB& b, const kssim::Options& opts) {
  using Mem = typename ExecSpace::memory_space;
  const int images = int(a.extent(0)), channels = int(a.extent(1));
  Kokkos::View<double*, Mem> per_image("per_image", images);
  Kokkos::View<double**, Mem> per_channel("per_channel", images, channels);
  kssim::ssim_per_image(exec, a, b, per_image, opts);
  kssim::ssim_per_channel(exec, a, b, per_channel, opts);
  auto pi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_image);
  auto pc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_channel);
  PerSliceMeans r;
  for (int n = 0; n < images; ++n) {
    r.per_image.push_back(pi(n));
    for (int c = 0; c < channels; ++c) r.per_channel.push_back(pc(n, c));
  }
  return r;
}

}  // namespace kssim_test
