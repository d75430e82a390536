// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Times every schedule (Options::schedule: Stages, Fused) of the five perf_tests image shapes, float, both
// paddings, forward and forward + backward, back to back on the default execution space: 5 warm-up steps,
// then 50 steps and one fence, per-step mean. A quick sweep for tuning runs and for the router's choices
// (perf_tests/README.md, "Schedules and the router"); kssim_perf_tests is the full benchmark. Build:
//   $KOKKOS/bin/nvcc_wrapper -std=c++20 -O3 -DNDEBUG -arch=sm_90 --extended-lambda -Iinclude -I$KOKKOS/include \
//       perf_tests/schedule_sweep.cpp -L$KOKKOS/lib -lkokkoscore -lcuda -ldl -o schedule_sweep
// (-DKSSIM_TUNE_FUSED_MIN_TEAMS=<n> to try other launch bounds of the fused kernels). Prints the SSIM and
// the L1 norm of the gradient of each run, to compare schedules at a glance. Arguments: `fused` times the
// fused schedule only; `volumes` the three perf_tests volume shapes too, after the images; `masked` masked SSIM
// (kssim::MaskedSSIM, both mask modes, a mask (N, 1, H, W) of values in [0, 1)) after SSIM, images only; `l1` the
// fused L1 + SSIM loss (kssim::L1SSIMLoss, its default weight; the loss printed as ssim) after those;
// `shape=NxCxHxW` that image shape only (hosts: the 1080p shape alone takes a minute); `paddings=all` Reflect and
// Replicate after Valid and Same (their cost over zero padding: the edge loads and BoundaryFold.hpp); `flushed` times
// each step after a kernel that writes 256 MB (the L2 cache flushed), as kssim_perf_tests' us_flushed
// (StepTiming.hpp: (flush + step) x 20 minus flush x 20, both back to back; A/B runs of kernel variants built
// with -DKSSIM_TUNE_...: perf_tests/gpu/variant_sweep.sh).
#include "StepTiming.hpp"

#include <kssim/kssim.hpp>
#include <Kokkos_Core.hpp>
#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
using Exec = Kokkos::DefaultExecutionSpace;
using T = float;

// Times every schedule (or the fused one) of one shape, both paddings, fwd and fwd+bwd, and prints a line each.
template <int Rank>
void sweep_shape(const std::array<int, Rank>& e, bool fused_only, bool flushed, bool masked, bool l1,
                 bool all_paddings) {
  using Layout = Kokkos::LayoutRight;
  using Image = std::conditional_t<Rank == 4, Kokkos::View<T****, Layout, Exec::memory_space>,
                                   Kokkos::View<T*****, Layout, Exec::memory_space>>;
  Exec exec;
  std::size_t n = 1;
  for (int v : e) n *= std::size_t(v);
  // One extent per rank; the label as std::string (Kokkos 4.6's View takes no `const char*` label, and nvcc
  // instantiates both branches of an `if constexpr` in this lambda).
  const auto make = [&]<std::size_t... I>(const char* name, std::index_sequence<I...>) {
    return Image(std::string(name), std::size_t(e[I])...);
  };
  const auto extents = std::make_index_sequence<Rank>{};
  Image a = make("a", extents), b = make("b", extents), g = make("g", extents), m;
  if constexpr (Rank == 4) {
    if (masked) {
      m = Image("m", std::size_t(e[0]), 1, std::size_t(e[2]), std::size_t(e[3]));
      T* pm = m.data();
      Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, m.size()), KOKKOS_LAMBDA(std::size_t i) {
        unsigned h = unsigned(i) * 2246822519u; h ^= h >> 15; h *= 0x85ebca6bu; h ^= h >> 13;
        pm[i] = float(h & 0xffff) / 65536.0f; });
    }
  }
  T* pa = a.data(); T* pb = b.data();
  Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(std::size_t i) {
    unsigned h = unsigned(i) * 2654435761u; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    pa[i] = float(h & 0xffffff) / 16777216.0f; unsigned k = h * 0x9e3779b1u; k ^= k >> 16; pb[i] = 0.6f * pa[i] + 0.4f * float(k & 0xffff) / 65536.0f; });
  std::string shape;
  for (int v : e) shape += (shape.empty() ? "" : "x") + std::to_string(v);
  // metric 0: SSIM; 1, 2: masked SSIM with map weights, normalized statistics; 3: the fused L1 + SSIM loss.
  std::vector<int> metrics{0};
  if (Rank == 4 && masked) metrics.insert(metrics.end(), {1, 2});
  if (l1) metrics.push_back(3);
  for (int metric : metrics)
  for (auto padding : {kssim::Padding::Valid, kssim::Padding::Same, kssim::Padding::Reflect, kssim::Padding::Replicate})
    for (auto sch : {kssim::Schedule::Stages, kssim::Schedule::Fused})
      for (int mode = 0; mode < 2; ++mode) {
        if (fused_only && sch != kssim::Schedule::Fused) continue;
        const bool extending = padding == kssim::Padding::Reflect || padding == kssim::Padding::Replicate;
        if (extending && (!all_paddings || metric == 2)) continue;
        try {
        kssim::Options o; o.padding = padding; o.schedule = sch;
        const kssim::Gradients wanted = mode ? kssim::Gradients::Image1 : kssim::Gradients::None;
        const kssim::MaskMode mask_mode = metric == 1 ? kssim::MaskMode::Weights : kssim::MaskMode::Normalized;
        std::optional<kssim::SSIM<Exec, T, Rank>> plain;
        std::optional<kssim::MaskedSSIM<Exec, T, Rank>> weighed;
        std::optional<kssim::L1SSIMLoss<Exec, T, Rank>> loss;
        if (metric == 0) plain.emplace(exec, e, o, wanted);
        else if (metric == 3) loss.emplace(exec, e, kssim::L1SSIMLossOptions{.ssim = o}, wanted);
        else weighed.emplace(exec, e, mask_mode, o, wanted);
        const auto value = [&] {
          return plain ? plain->value_on_host() : loss ? loss->value_on_host() : weighed->value_on_host();
        };
        auto step = [&] {
          if (plain) { plain->forward(a, b); if (mode) plain->backward(g); }
          else if (loss) { loss->forward(a, b); if (mode) loss->backward(g); }
          else { weighed->forward(a, b, m); if (mode) weighed->backward(g); }
        };
        for (int i = 0; i < 5; ++i) step();
        const double us = 1e6 * (flushed ? kssim_perf::flushed_seconds(exec, step, 20)
                                         : kssim_perf::back_to_back_seconds(exec, step, 50));
        double gsum = 0;
        if (mode) { const T* gp = g.data(); Kokkos::parallel_reduce(Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(std::size_t i, double& s) { s += Kokkos::fabs(gp[i]); }, gsum); }
        const char* metric_name = metric == 0   ? ""
                                  : metric == 1 ? " masked-weights"
                                  : metric == 2 ? " masked-normalized"
                                                : " l1-ssim";
        std::printf("%s%s %-9s %-6s %-7s %8.1f us  ssim %.6f |g| %.6e\n", shape.c_str(), metric_name,
                    kssim::to_string(padding), kssim::to_string(sch), mode ? "fwd+bwd" : "fwd", us, value(), gsum);
        T* pg = g.data();  // zero it with a pointer-only kernel (Kokkos' own fill misbehaves under nvcc + mdspan)
        Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(std::size_t i) { pg[i] = T(0); });
        } catch (const std::exception& ex) { std::printf("%s: %s\n", kssim::to_string(sch), ex.what()); }
      }
}

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  bool fused_only = false, flushed = false, volumes = false, masked = false, l1 = false, all_paddings = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    fused_only = fused_only || std::string(argv[i]) == "fused";
    flushed = flushed || std::string(argv[i]) == "flushed";
    volumes = volumes || std::string(argv[i]) == "volumes";
    masked = masked || std::string(argv[i]) == "masked";
    l1 = l1 || std::string(argv[i]) == "l1";
    all_paddings = all_paddings || std::string(argv[i]) == "paddings=all";
    if (std::string(argv[i]).rfind("shape=", 0) == 0) only = std::string(argv[i]).substr(6);
  }
  const std::array<int, 4> shapes[] = {{1, 3, 1080, 1920}, {64, 1, 128, 128}, {1, 3, 2160, 3840}, {8, 3, 512, 512}, {1, 1, 4096, 4096}};
  for (auto e : shapes) {
    const std::string name = std::to_string(e[0]) + "x" + std::to_string(e[1]) + "x" + std::to_string(e[2]) + "x" +
                             std::to_string(e[3]);
    if (only.empty() || only == name) sweep_shape<4>(e, fused_only, flushed, masked, l1, all_paddings);
  }
  if (volumes)
    for (const std::array<int, 5> e : {std::array<int, 5>{1, 1, 128, 128, 128}, {2, 3, 96, 96, 96}, {1, 1, 256, 256, 256}})
      sweep_shape<5>(e, fused_only, flushed, false, l1, all_paddings);
}
