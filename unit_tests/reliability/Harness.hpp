// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Runs one reliability case on one (execution space, value type, layout) against the float64 reference and
// measures the errors of every output: the mean (returned and into a View), the per-image and per-channel
// means, the map, and both gradients, through the API paths the case names (Cases.hpp).
//
// Every View the library sees is surrounded by guard elements: the "stride" layout is a strided subview of
// a larger allocation whose margins hold NaN (a read outside the subview poisons the result, a write
// outside it is detected), and every output View starts as NaN, so an element the library forgets to write
// is detected too.

#include "Cases.hpp"
#include "TestingUtilities.hpp"

#include <algorithm>
#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace kssim_rel {

using kssim_test::ReferenceResult;

// Layout tags: the two common layouts, and a LayoutStride subview of a padded LayoutRight allocation.
struct Right {
  using layout = Kokkos::LayoutRight;
  static constexpr const char* name = "right";
};
struct Left {
  using layout = Kokkos::LayoutLeft;
  static constexpr const char* name = "left";
};
struct Strided {
  using layout = Kokkos::LayoutRight;  // of the parent allocation
  static constexpr const char* name = "stride";
};

template <class T>
constexpr const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

// A View plus the allocation it lives in (the same View unless strided).
template <class Exec, class T, class L, int Rank>
struct Guarded {
  using Mem = typename Exec::memory_space;
  using data_type = std::conditional_t<Rank == 4, T****, T*****>;
  using Parent = Kokkos::View<data_type, typename L::layout, Mem>;
  using View = std::conditional_t<std::is_same_v<L, Strided>, Kokkos::View<data_type, Kokkos::LayoutStride, Mem>,
                                  Parent>;
  Parent parent;
  View view;
  Shape shape;  // of `view`
};

// Margins of the strided parent: (n, c, d, h, w) before and after.
inline constexpr int margin_before[5] = {0, 1, 1, 1, 2};
inline constexpr int margin_after[5] = {0, 0, 1, 2, 1};

template <class Exec, class T, class L, int Rank>
Guarded<Exec, T, L, Rank> make_guarded(const std::string& label, const Shape& s) {
  Guarded<Exec, T, L, Rank> g;
  g.shape = s;
  const int e[5] = {s.n, s.c, s.d, s.h, s.w};
  if constexpr (std::is_same_v<L, Strided>) {
    int p[5];
    for (int i = 0; i < 5; ++i) p[i] = e[i] + margin_before[i] + margin_after[i];
    auto r = [&](int i) { return std::pair<int, int>(margin_before[i], margin_before[i] + e[i]); };
    if constexpr (Rank == 4) {
      g.parent = typename Guarded<Exec, T, L, Rank>::Parent(label, p[0], p[1], p[3], p[4]);
      g.view = Kokkos::subview(g.parent, r(0), r(1), r(3), r(4));
    } else {
      g.parent = typename Guarded<Exec, T, L, Rank>::Parent(label, p[0], p[1], p[2], p[3], p[4]);
      g.view = Kokkos::subview(g.parent, r(0), r(1), r(2), r(3), r(4));
    }
  } else {
    if constexpr (Rank == 4)
      g.parent = typename Guarded<Exec, T, L, Rank>::Parent(label, s.n, s.c, s.h, s.w);
    else
      g.parent = typename Guarded<Exec, T, L, Rank>::Parent(label, s.n, s.c, s.d, s.h, s.w);
    g.view = g.parent;
  }
  // Filled on the host and copied: Kokkos' device fill kernel holds a View, which the mdspan-based View
  // under nvcc misreads (include/kssim/impl/core/KernelArrays.hpp).
  auto host = Kokkos::create_mirror_view(g.parent);
  Kokkos::deep_copy(host, std::numeric_limits<T>::quiet_NaN());
  Kokkos::deep_copy(g.parent, host);
  return g;
}

// Calls f(parent_index..., inside, flat_index_in_shape) for every element of the parent on the host mirror.
template <int Rank, class HostParent, class F>
void for_each_element(const HostParent& hp, bool strided, const Shape& s, F&& f) {
  const int off[5] = {strided ? margin_before[0] : 0, strided ? margin_before[1] : 0,
                      strided ? margin_before[2] : 0, strided ? margin_before[3] : 0, strided ? margin_before[4] : 0};
  const int pd = Rank == 5 ? int(hp.extent(2)) : 1;
  for (int n = 0; n < int(hp.extent(0)); ++n)
    for (int c = 0; c < int(hp.extent(1)); ++c)
      for (int d = 0; d < pd; ++d)
        for (int h = 0; h < int(hp.extent(Rank - 2)); ++h)
          for (int w = 0; w < int(hp.extent(Rank - 1)); ++w) {
            const int in = n - off[0], ic = c - off[1], id = Rank == 5 ? d - off[2] : 0, ih = h - off[3],
                      iw = w - off[4];
            const bool inside = in >= 0 && in < s.n && ic >= 0 && ic < s.c && id >= 0 && id < s.d && ih >= 0 &&
                                ih < s.h && iw >= 0 && iw < s.w;
            auto& ref = [&]() -> auto& {
              if constexpr (Rank == 4)
                return hp(n, c, h, w);
              else
                return hp(n, c, d, h, w);
            }();
            f(ref, inside, inside ? s.index(in, ic, id, ih, iw) : std::size_t(0));
          }
}

template <class G>
void write(G& g, const std::vector<double>& data) {
  using T = typename G::View::non_const_value_type;
  constexpr int Rank = int(G::View::rank());
  constexpr bool strided = std::is_same_v<typename G::View::array_layout, Kokkos::LayoutStride>;
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.parent);
  for_each_element<Rank>(h, strided, g.shape, [&](T& v, bool inside, std::size_t i) {
    if (inside) v = T(data[i]);
  });
  Kokkos::deep_copy(g.parent, h);
}

// The subview's values; `guards_intact` becomes false if a margin element is no longer NaN.
template <class G>
std::vector<double> read(const G& g, bool& guards_intact) {
  using T = typename G::View::non_const_value_type;
  constexpr int Rank = int(G::View::rank());
  constexpr bool strided = std::is_same_v<typename G::View::array_layout, Kokkos::LayoutStride>;
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.parent);
  std::vector<double> out(g.shape.size());
  for_each_element<Rank>(h, strided, g.shape, [&](T& v, bool inside, std::size_t i) {
    if (inside)
      out[i] = v;
    else if (!std::isnan(v))
      guards_intact = false;
  });
  return out;
}

// ------------------------------------------------------------------------------------------------------

struct RunResult {
  double value_error = 0;     // mean, per-image and per-channel means: max absolute error
  double map_error = 0;       // map: max absolute error
  double gradient_error = 0;  // gradients: max relative L2 error (see Case::grad_floor)
  std::vector<std::string> failures;
  bool passed() const { return failures.empty(); }
};

// max(a, e) that lets NaN win, so a NaN error is never hidden.
inline double worst(double a, double e) { return (std::isnan(a) || std::isnan(e)) ? std::nan("") : std::max(a, e); }

inline double max_abs_error_nan(const std::vector<double>& got, const std::vector<double>& want) {
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i) e = worst(e, std::abs(got[i] - want[i]));
  return e;
}

inline double gradient_error(const std::vector<double>& got, const std::vector<double>& want, double floor) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  num = std::sqrt(num);
  den = std::max(std::sqrt(den), floor);
  return den > 0 ? num / den : num;
}

inline std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << v;
  return s.str();
}

template <class Exec, class T, class L, int Rank>
RunResult run_case(const Case& cs, const std::vector<double>& x, const std::vector<double>& y,
                   const ReferenceResult& ref) {
  using Mem = typename Exec::memory_space;
  RunResult r;
  const double slack = std::is_same_v<T, float> ? cs.float_slack : cs.double_slack;
  const double vtol = slack * kssim_test::value_tolerance<T>(), gtol = slack * kssim_test::gradient_tolerance<T>();
  const double map_tol = slack * kssim_test::map_tolerance<T>();  // per pixel, as in unit_tests/SSIMChecks.hpp
  const Shape& s = cs.shape;
  const Shape& ms = ref.map_shape;
  const double grad_floor =
      cs.grad_floor * std::sqrt(double(s.size())) / (double(ms.size()) * cs.ro.data_range);
  auto fail = [&](const std::string& what) { r.failures.push_back(what); };
  // A mean over n map pixels: the value tolerance, except that a mean over fewer than 20 pixels (tiny
  // maps, per-image / per-channel means of a few pixels) is as exact as the pixels themselves, no more:
  // its errors do not average out, so it gets map_tol / n.
  auto check_value = [&](const char* what, double got, double want, double n) {
    const double tol = std::max(vtol, map_tol / n);
    const double e = std::abs(got - want);
    r.value_error = worst(r.value_error, e);
    if (!(e <= tol)) fail(std::string(what) + ": " + fmt(got) + " vs reference " + fmt(want) + " (error " + fmt(e) + " > " + fmt(tol) + ")");
  };
  const double map_pixels = double(ms.size()), per_image = map_pixels / double(s.n),
               per_channel = per_image / double(s.c);
  auto check_map = [&](const char* what, const std::vector<double>& got) {
    const double e = max_abs_error_nan(got, ref.map);
    r.map_error = worst(r.map_error, e);
    if (!(e <= map_tol)) fail(std::string(what) + ": max abs error " + fmt(e) + " > " + fmt(map_tol));
  };
  auto check_grad = [&](const char* what, const std::vector<double>& got, const std::vector<double>& want) {
    const double e = gradient_error(got, want, grad_floor);
    r.gradient_error = worst(r.gradient_error, e);
    if (!(e <= gtol)) fail(std::string(what) + ": relative L2 error " + fmt(e) + " > " + fmt(gtol));
  };
  auto guards = [&](const char* what, bool intact) {
    if (!intact) fail(std::string(what) + ": an element outside the View was written");
  };
  auto scaled = [](const std::vector<double>& v, double f) {
    std::vector<double> o(v);
    for (double& e : o) e *= f;
    return o;
  };

  try {
    Exec exec;
    kssim::Options opts = kssim_test::to_options(cs.ro);
    opts.schedule = cs.schedule;
    const auto possible = kssim_test::schedules_for<kssim_test::Config<Exec, T, L>, Rank>(opts);
    if (std::find(possible.begin(), possible.end(), opts.schedule) == possible.end() &&
        opts.schedule != kssim::Schedule::Auto)
      opts.schedule = kssim::Schedule::Stages;  // Fused on volumes, and tiles this backend cannot hold
    if constexpr (!kssim::impl::is_gpu_space_v<Exec>) {
      opts.team_size = std::min(cs.team_size, int(exec.concurrency()));
      opts.vector_length = cs.vector_length;
    }
    auto a = make_guarded<Exec, T, L, Rank>("a", s);
    auto b = make_guarded<Exec, T, L, Rank>("b", s);
    write(a, x);
    write(b, y);
    // Const image Views, as a caller with read-only data would pass them.
    using ConstView = typename decltype(a.view)::const_type;
    const ConstView ca = a.view, cb = b.view;

    const double mean = kssim::ssim(exec, ca, cb, opts);
    check_value("ssim()", mean, ref.mean, map_pixels);
    Kokkos::View<double, Mem> mean_view("mean");
    kssim::ssim(exec, ca, cb, mean_view, opts);
    double mv = 0;
    Kokkos::deep_copy(mv, mean_view);
    if (!(mv == mean) && !(std::isnan(mv) && std::isnan(mean)))
      fail("ssim(view) " + fmt(mv) + " differs from ssim() " + fmt(mean));

    {
      auto map = make_guarded<Exec, T, L, Rank>("map", ms);
      kssim::ssim_map(exec, ca, cb, map.view, opts);
      bool ok = true;
      check_map("ssim_map()", read(map, ok));
      guards("ssim_map()", ok);
    }
    {
      const kssim_test::PerSliceMeans got = kssim_test::per_slice_means(exec, ca, cb, opts);
      for (std::size_t n = 0; n < got.per_image.size(); ++n)
        check_value("ssim_per_image()", got.per_image[n], ref.per_image[n], per_image);
      for (std::size_t i = 0; i < got.per_channel.size(); ++i)
        check_value("ssim_per_channel()", got.per_channel[i], ref.per_channel[i], per_channel);
    }
    {
      auto g1 = make_guarded<Exec, T, L, Rank>("g1", s);
      auto g2 = make_guarded<Exec, T, L, Rank>("g2", s);
      const double m = kssim::ssim_grad(exec, ca, cb, g1.view, g2.view, opts);
      check_value("ssim_grad() mean", m, ref.mean, map_pixels);
      bool ok1 = true, ok2 = true;
      check_grad("ssim_grad() grad1", read(g1, ok1), ref.grad1);
      check_grad("ssim_grad() grad2", read(g2, ok2), ref.grad2);
      guards("ssim_grad() grad1", ok1);
      guards("ssim_grad() grad2", ok2);
    }

    using GView = typename Guarded<Exec, T, L, Rank>::View;
    const std::array<int, Rank> extents = kssim_test::object_extents<Rank>(s);

    if (cs.api == Api::SingleGrad) {
      auto g1 = make_guarded<Exec, T, L, Rank>("g1", s);
      auto g2 = make_guarded<Exec, T, L, Rank>("g2", s);
      kssim::ssim_grad(exec, ca, cb, g1.view, GView{}, opts);
      kssim::ssim_grad(exec, ca, cb, GView{}, g2.view, opts);
      bool ok1 = true, ok2 = true;
      check_grad("ssim_grad(grad1 only)", read(g1, ok1), ref.grad1);
      check_grad("ssim_grad(grad2 only)", read(g2, ok2), ref.grad2);
      guards("ssim_grad(grad1 only)", ok1);
      guards("ssim_grad(grad2 only)", ok2);
    } else if (cs.api == Api::ObjectAccum) {
      // loss = -0.75 * SSIM accumulated onto gradients that already hold 0.5 * reference.
      kssim::SSIM<Exec, T, Rank> loss(exec, extents, opts, kssim::Gradients::Both);
      auto map = make_guarded<Exec, T, L, Rank>("map", ms);
      loss.forward(ca, cb, map.view);
      check_value("SSIM::forward() value", loss.value_on_host(), ref.mean, map_pixels);
      bool ok = true;
      check_map("SSIM::forward() map", read(map, ok));
      guards("SSIM::forward() map", ok);
      auto g1 = make_guarded<Exec, T, L, Rank>("g1", s);
      auto g2 = make_guarded<Exec, T, L, Rank>("g2", s);
      const auto p1 = kssim_test::rounded<T>(scaled(ref.grad1, 0.5)), p2 = kssim_test::rounded<T>(scaled(ref.grad2, 0.5));
      write(g1, p1);
      write(g2, p2);
      loss.backward(g1.view, g2.view, kssim::Accumulate::Yes, -0.75);
      bool ok1 = true, ok2 = true;
      auto r1 = read(g1, ok1), r2 = read(g2, ok2);
      for (std::size_t i = 0; i < r1.size(); ++i) {  // g = p - 0.75 d(SSIM): (g - p) / -0.75 is the gradient
        r1[i] = (r1[i] - p1[i]) / -0.75;
        r2[i] = (r2[i] - p2[i]) / -0.75;
      }
      check_grad("SSIM::backward(accumulate, -0.75) grad1", r1, ref.grad1);
      check_grad("SSIM::backward(accumulate, -0.75) grad2", r2, ref.grad2);
      guards("SSIM::backward() grad1", ok1);
      guards("SSIM::backward() grad2", ok2);
    } else if (cs.api == Api::ObjectImage2) {
      kssim::SSIM<Exec, T, Rank> loss(exec, extents, opts, kssim::Gradients::Image2);
      loss.forward(ca, cb);
      Kokkos::View<double, Mem> upstream("upstream");
      const double two = 2.0;  // host-staged: Kokkos' fill kernel holds a View (KernelArrays.hpp)
      Kokkos::deep_copy(upstream, Kokkos::View<const double, Kokkos::HostSpace>(&two));
      auto g2 = make_guarded<Exec, T, L, Rank>("g2", s);
      loss.backward(upstream, GView{}, g2.view);
      check_value("SSIM::forward() value", loss.value_on_host(), ref.mean, map_pixels);
      bool ok = true;
      check_grad("SSIM::backward(device upstream 2) grad2", scaled(read(g2, ok), 0.5), ref.grad2);
      guards("SSIM::backward() grad2", ok);
    }
    Kokkos::fence();
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
  return r;
}

}  // namespace kssim_rel
