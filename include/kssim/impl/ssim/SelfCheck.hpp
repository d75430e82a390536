// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The first-use self-check: before kssim computes anything on an (execution space, value type) for the
// first time in a process, it proves that this Kokkos build runs its kernels as written, and throws
// std::runtime_error otherwise. A configuration kssim cannot run correctly on must fail loudly at first
// use, never return a plausible number (the mdspan-based View once made every CUDA kernel silently do
// nothing: KernelArrays.hpp).
//
// Two checks, about a millisecond once per process and (space, type), never per call:
//  1. Layout probes. Every kernel functor type of the pipeline is launched wrapped in a probe that holds
//     the functor, then a sentinel word. Each team counts itself and compares the sentinel; team 0 also
//     reports the probe's size as the device compiler sees it. A functor laid out differently on the
//     device than on the host moves the sentinel or changes the size; a misread launch runs too few teams.
//  2. A small SSIM problem through the real pipeline (forward, both gradients), against a float64 direct
//     evaluation on the host: the value, and the gradients along a fixed direction against a central finite
//     difference of that evaluation.

#include <kssim/impl/msssim/AveragePool.hpp>
#include <kssim/impl/masked/MaskCheck.hpp>
#include <kssim/impl/masked/MaskedColumnBlur.hpp>
#include <kssim/impl/masked/MaskedRowBlur.hpp>
#include <kssim/impl/msssim/MsSsimProduct.hpp>
#include <kssim/impl/ssim/Plan.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kssim::impl {

// Faults a test may inject to see the failure path (never used otherwise).
enum class SelfCheckFault { None, FunctorLayout, MissingTeams, WrongResult };

inline constexpr std::uint64_t probe_sentinel = 0x6b7373696d5f6f6bULL;  // "kssim_ok"

template <class Functor>
struct LayoutProbe {
  Functor functor;
  std::uint64_t sentinel;
  unsigned* counts;  // [0] teams that ran, [1] teams that read a wrong sentinel, [2] sizeof as the device sees it

  template <class Team>
  KOKKOS_FUNCTION void operator()(const Team& team) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Kokkos::atomic_inc(&counts[0]);
      if (sentinel != probe_sentinel) Kokkos::atomic_inc(&counts[1]);
      if (team.league_rank() == 0) counts[2] = unsigned(sizeof(LayoutProbe));
    });
  }
};

inline std::string kokkos_version_string() {
  std::ostringstream s;
  s << KOKKOS_VERSION / 10000 << '.' << KOKKOS_VERSION / 100 % 100 << '.' << KOKKOS_VERSION % 100;
  return s.str();
}

template <class ExecSpace, class T>
[[noreturn]] void self_check_failed(const std::string& what) {
  std::ostringstream s;
  s << "kssim: self-check failed on Kokkos " << kokkos_version_string() << ", backend " << ExecSpace::name() << ", "
    << (sizeof(T) == 4 ? "float" : "double") << ": " << what
    << ". kssim refuses to compute here rather than return wrong numbers. Likely cause: the device compiler lays "
       "out kernel functors differently from the host compiler (seen with Kokkos' mdspan-based View under nvcc "
       "and C++20: a functor holding a Kokkos::View; see include/kssim/impl/core/KernelArrays.hpp), or a Kokkos build "
       "whose backend does not launch kernels on this machine.";
  throw std::runtime_error(s.str());
}

// Launches LayoutProbe<Functor> and checks what it saw.
template <class ExecSpace, class T, class Functor>
void probe_layout(const ExecSpace& exec, const char* name, SelfCheckFault fault) {
  constexpr int league = 64;
  Kokkos::View<unsigned[3], typename ExecSpace::memory_space> counts(Kokkos::view_alloc(exec, "kssim::probe_counts"));
  const std::uint64_t sentinel = fault == SelfCheckFault::FunctorLayout ? ~probe_sentinel : probe_sentinel;
  Kokkos::parallel_for("kssim::self_check_probe", Kokkos::TeamPolicy<ExecSpace>(exec, league, 1),
                       LayoutProbe<Functor>{Functor{}, sentinel, counts.data()});
  unsigned host[3] = {};
  Kokkos::deep_copy(exec, Kokkos::View<unsigned[3], Kokkos::HostSpace>(host), counts);
  exec.fence("kssim::self_check: probe");
  const unsigned expected = fault == SelfCheckFault::MissingTeams ? league + 1 : league;
  std::ostringstream why;
  if (host[0] != expected)
    why << "a probe of kernel " << name << " ran " << host[0] << " of " << expected << " teams";
  else if (host[1] != 0)
    why << "kernel " << name << "'s functor is laid out differently on the device (a sentinel behind it was misread)";
  else if (host[2] != sizeof(LayoutProbe<Functor>))
    why << "kernel " << name << "'s functor is " << host[2] << " bytes on the device and " << sizeof(LayoutProbe<Functor>)
        << " on the host";
  if (!why.str().empty()) self_check_failed<ExecSpace, T>(why.str());
}

// Mean SSIM of one (C, H, W) image pair, valid padding, evaluated directly in double (window sums, no
// separable passes, no recentring): the independent answer the pipeline must reproduce.
inline double direct_ssim(const std::vector<double>& x, const std::vector<double>& y, int c, int h, int w,
                          const Options& o) {
  const int k = o.window_size, r = k / 2;
  std::vector<double> g(k);
  double total = 0;
  for (int t = 0; t < k; ++t) total += g[t] = std::exp(-double(t - r) * (t - r) / (2 * o.sigma * o.sigma));
  for (double& v : g) v /= total;
  const double c1 = (o.k1 * o.data_range) * (o.k1 * o.data_range), c2 = (o.k2 * o.data_range) * (o.k2 * o.data_range);
  double sum = 0;
  for (int ch = 0; ch < c; ++ch)
    for (int i = 0; i + k <= h; ++i)
      for (int j = 0; j + k <= w; ++j) {
        double m1 = 0, m2 = 0, e11 = 0, e22 = 0, e12 = 0;
        for (int a = 0; a < k; ++a)
          for (int b = 0; b < k; ++b) {
            const double wt = g[a] * g[b], p = x[(ch * h + i + a) * w + j + b], q = y[(ch * h + i + a) * w + j + b];
            m1 += wt * p, m2 += wt * q, e11 += wt * p * p, e22 += wt * q * q, e12 += wt * p * q;
          }
        const double v1 = e11 - m1 * m1, v2 = e22 - m2 * m2, cov = e12 - m1 * m2;
        sum += (2 * m1 * m2 + c1) * (2 * cov + c2) / ((m1 * m1 + m2 * m2 + c1) * (v1 + v2 + c2));
      }
  return sum / (double(c) * (h - k + 1) * (w - k + 1));
}

template <class ExecSpace, class T>
void check_small_problem(const ExecSpace& exec, const Options& opts, SelfCheckFault fault);

// Runs both checks; throws std::runtime_error (self_check_failed) on any failure.
template <class ExecSpace, class T>
void run_self_check(const ExecSpace& exec, SelfCheckFault fault = SelfCheckFault::None) {
  probe_layout<ExecSpace, T, RowBlur<ExecSpace, T>>(exec, "row_blur", fault);
  probe_layout<ExecSpace, T, ColumnBlur<ExecSpace, T, ColumnOutput::Statistics>>(exec, "column_blur_stats", fault);
  probe_layout<ExecSpace, T, ColumnBlur<ExecSpace, T, ColumnOutput::Map>>(exec, "column_blur_map", fault);
  probe_layout<ExecSpace, T, AdjointColumn<ExecSpace, T, 3>>(exec, "adjoint_column<3>", fault);
  probe_layout<ExecSpace, T, AdjointColumn<ExecSpace, T, 4>>(exec, "adjoint_column<4>", fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 3>>(exec, "adjoint_row<3>", fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 4>>(exec, "adjoint_row<4>", fault);
  probe_layout<ExecSpace, T, BoundaryFold<ExecSpace, T>>(exec, "boundary_fold", fault);
  probe_layout<ExecSpace, T, FusedForward<ExecSpace, T>>(exec, "fused_forward", fault);
  // Window::Float32's map kernels (MapTerms.hpp, RawWindowTerm): SSIM's, and MS-SSIM's cs below.
  probe_layout<ExecSpace, T, ColumnBlur<ExecSpace, T, ColumnOutput::Map, RawWindowTerm<SsimTerm>>>(
      exec, "column_blur_map_float32_window", fault);
  probe_layout<ExecSpace, T, FusedForward<ExecSpace, T, RawWindowTerm<SsimTerm>>>(exec, "fused_forward_float32_window",
                                                                                   fault);
  probe_layout<ExecSpace, T, FusedBackward<ExecSpace, T, 3>>(exec, "fused_backward<3>", fault);
  probe_layout<ExecSpace, T, FusedBackward<ExecSpace, T, 4>>(exec, "fused_backward<4>", fault);
  // MS-SSIM (MsSsimPlan.hpp) and masked SSIM (MaskedPlan.hpp).
  probe_layout<ExecSpace, T, ColumnBlur<ExecSpace, T, ColumnOutput::Map, ContrastStructureTerm>>(exec, "column_blur_cs",
                                                                                                 fault);
  probe_layout<ExecSpace, T, AveragePool<ExecSpace, T>>(exec, "average_pool", fault);
  probe_layout<ExecSpace, T, AveragePoolAdjoint<ExecSpace, T>>(exec, "average_pool_adjoint", fault);
  probe_layout<ExecSpace, T, MsSsimProduct>(exec, "ms_ssim_product", fault);
  probe_layout<ExecSpace, T, MaskCheck<ExecSpace, T>>(exec, "check_mask", fault);
  probe_layout<ExecSpace, T, MaskedRowBlur<ExecSpace, T>>(exec, "masked_row_blur", fault);
  probe_layout<ExecSpace, T, MaskedColumnBlur<ExecSpace, T, MaskMode::Normalized, ColumnOutput::Statistics>>(
      exec, "masked_column_blur_stats", fault);
  probe_layout<ExecSpace, T, MaskedColumnBlur<ExecSpace, T, MaskMode::Weights, ColumnOutput::Map>>(
      exec, "masked_column_blur_map<weights>", fault);
  probe_layout<ExecSpace, T, MaskedColumnBlur<ExecSpace, T, MaskMode::Normalized, ColumnOutput::Map>>(
      exec, "masked_column_blur_map<normalized>", fault);
  probe_layout<ExecSpace, T, FusedForward<ExecSpace, T, ContrastStructureTerm>>(exec, "fused_forward_cs", fault);
  probe_layout<ExecSpace, T, ColumnBlur<ExecSpace, T, ColumnOutput::Map, RawWindowTerm<ContrastStructureTerm>>>(
      exec, "column_blur_cs_float32_window", fault);
  probe_layout<ExecSpace, T, FusedForward<ExecSpace, T, RawWindowTerm<ContrastStructureTerm>>>(
      exec, "fused_forward_cs_float32_window", fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 3, true>>(exec, "adjoint_row<3, pixel weights>", fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 4, true>>(exec, "adjoint_row<4, pixel weights>", fault);
  // The fused L1 + SSIM loss's instances of the last backward kernels (L1Term.hpp).
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 3, false, true>>(exec, "adjoint_row<3, L1>", fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 4, false, true>>(exec, "adjoint_row<4, L1>", fault);
  probe_layout<ExecSpace, T, FusedBackward<ExecSpace, T, 3, true>>(exec, "fused_backward<3, L1>", fault);
  probe_layout<ExecSpace, T, FusedBackward<ExecSpace, T, 4, true>>(exec, "fused_backward<4, L1>", fault);
  // Every schedule the router can pick runs the small problem.
  for (Schedule schedule : {Schedule::Stages, Schedule::Fused}) {
    Options opts;
    opts.schedule = schedule;
    if (schedule == Schedule::Fused && (fused_forward_rows<ExecSpace, T>(exec, opts.window_size) == 0 ||
                                        fused_backward_rows<ExecSpace, T, 4>(exec, opts.window_size) == 0))
      continue;
    check_small_problem<ExecSpace, T>(exec, opts, fault);
  }
}

// The small problem of run_self_check through the pipeline with `opts` (forward, both gradients).
template <class ExecSpace, class T>
void check_small_problem(const ExecSpace& exec, const Options& opts, SelfCheckFault fault) {

  // A small pair (odd extents, two channels) through the real pipeline with both gradients.
  using Mem = typename ExecSpace::memory_space;
  constexpr int C = 2, H = 15, W = 21;
  std::vector<double> x(C * H * W), y(C * H * W), dir(C * H * W);
  std::uint32_t state = 12345u;
  auto next = [&] { return ((state = state * 1664525u + 1013904223u) >> 8) / double(1u << 24); };
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = double(T(next()));
    y[i] = double(T(0.6 * x[i] + 0.4 * next()));
    dir[i] = next() - 0.5;
  }
  Kokkos::View<T****, Kokkos::LayoutRight, Mem> dx(Kokkos::view_alloc(exec, "kssim::check_x"), 1, C, H, W),
      dy(Kokkos::view_alloc(exec, "kssim::check_y"), 1, C, H, W),
      g1(Kokkos::view_alloc(exec, "kssim::check_g1"), 1, C, H, W),
      g2(Kokkos::view_alloc(exec, "kssim::check_g2"), 1, C, H, W);
  auto hx = Kokkos::create_mirror_view(dx), hy = Kokkos::create_mirror_view(dy);
  for (int i = 0; i < C * H * W; ++i) {
    hx.data()[i] = T(x[i]);
    hy.data()[i] = T(y[i]);
  }
  Kokkos::deep_copy(exec, dx, hx);
  Kokkos::deep_copy(exec, dy, hy);
  const Plan<ExecSpace, T> plan(exec, make_geometry<4>({1, C, H, W}, opts), opts, {true, true}, false);
  const auto xa = as_rank5<InputArray<T>>(dx), ya = as_rank5<InputArray<T>>(dy);
  plan.forward(exec, xa, ya, {});
  plan.backward(exec, xa, ya, {.grad1 = as_rank5<OutputArray<T>>(g1), .grad2 = as_rank5<OutputArray<T>>(g2)});
  double value = 0;
  Kokkos::deep_copy(exec, value, plan.mean());
  auto hg1 = Kokkos::create_mirror_view(g1), hg2 = Kokkos::create_mirror_view(g2);
  Kokkos::deep_copy(exec, hg1, g1);
  Kokkos::deep_copy(exec, hg2, g2);
  exec.fence("kssim::self_check: small problem");

  const double tolerance = sizeof(T) == 4 ? 1e-4 : 1e-9;
  const double expected = direct_ssim(x, y, C, H, W, opts) + (fault == SelfCheckFault::WrongResult ? 1.0 : 0.0);
  if (!(std::abs(value - expected) <= tolerance)) {
    std::ostringstream why;
    why.precision(10);
    why << "SSIM of a 1x2x15x21 test pair is " << value << ", expected " << expected << " (" << to_string(opts.schedule)
        << " schedule)";
    self_check_failed<ExecSpace, T>(why.str());
  }
  // Directional derivatives: <grad, dir> against (f(+h dir) - f(-h dir)) / 2h, for each image.
  const double step = 1e-4;
  for (int image = 0; image < 2; ++image) {
    std::vector<double> plus = image == 0 ? x : y, minus = plus;
    double along = 0;
    for (std::size_t i = 0; i < dir.size(); ++i) {
      plus[i] += step * dir[i];
      minus[i] -= step * dir[i];
      along += double(image == 0 ? hg1.data()[i] : hg2.data()[i]) * dir[i];
    }
    const double fd = image == 0 ? (direct_ssim(plus, y, C, H, W, opts) - direct_ssim(minus, y, C, H, W, opts)) / (2 * step)
                                 : (direct_ssim(x, plus, C, H, W, opts) - direct_ssim(x, minus, C, H, W, opts)) / (2 * step);
    if (!(std::abs(along - fd) <= 1e-3 * std::abs(fd) + 1e-6)) {
      std::ostringstream why;
      why.precision(10);
      why << "the gradient of image " << image + 1 << " along a test direction is " << along << ", expected " << fd
          << " (" << to_string(opts.schedule) << " schedule)";
      self_check_failed<ExecSpace, T>(why.str());
    }
  }
}

// The layout probes of the kernels that read 16-bit images (S) or write 16-bit maps and gradients (O)
// (Storage.hpp): their functors hold other array types than the compute type's, so they are probed too.
// Their arithmetic is the compute type's, which run_self_check<ExecSpace, T> checks.
template <class ExecSpace, class T, class S, class O>
void run_storage_self_check(const ExecSpace& exec, SelfCheckFault fault = SelfCheckFault::None) {
  probe_layout<ExecSpace, T, RowBlur<ExecSpace, T, S>>(exec, "row_blur (16-bit)", fault);
  probe_layout<ExecSpace, T, ColumnBlur<ExecSpace, T, ColumnOutput::Map, SsimTerm, O>>(exec, "column_blur_map (16-bit)",
                                                                                      fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 3, false, false, S, O>>(exec, "adjoint_row<3> (16-bit)", fault);
  probe_layout<ExecSpace, T, AdjointRow<ExecSpace, T, 4, false, false, S, O>>(exec, "adjoint_row<4> (16-bit)", fault);
  probe_layout<ExecSpace, T, BoundaryFold<ExecSpace, T, S, O>>(exec, "boundary_fold (16-bit)", fault);
  probe_layout<ExecSpace, T, FusedForward<ExecSpace, T, SsimTerm, S, O>>(exec, "fused_forward (16-bit)", fault);
  probe_layout<ExecSpace, T, FusedBackward<ExecSpace, T, 3, false, S, O>>(exec, "fused_backward<3> (16-bit)", fault);
  probe_layout<ExecSpace, T, FusedBackward<ExecSpace, T, 4, false, S, O>>(exec, "fused_backward<4> (16-bit)", fault);
}

template <class ExecSpace, class T, class S, class O>
void ensure_storage_self_checked(const ExecSpace& exec) {
  static const bool checked = (run_storage_self_check<ExecSpace, T, S, O>(exec), true);
  (void)checked;
}

// Runs the self-check once per process and (ExecSpace, T); a failed check throws again at every call.
template <class ExecSpace, class T>
void ensure_self_checked(const ExecSpace& exec) {
  static const bool checked = (run_self_check<ExecSpace, T>(exec), true);
  (void)checked;
}

}  // namespace kssim::impl
