// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SSIMULACRA2 throughput on the default execution space: comparisons per second at 1920x1080 and
// 3840x2160 (or --size WxH), uncached (reference and distorted each time), cached reference one image at a
// time, and cached reference over batches. Synthetic images (a smooth pattern plus noise; the work does not
// depend on the content). Prints one line per measurement and the workspace held.
//
//   kssim_perf_ssimulacra2 [--size 1920x1080] [--batch 10] [--repeat 5]

#include <kssim/Ssimulacra2.hpp>

#include "SyntheticImages.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Images = Kokkos::View<float****, Kokkos::LayoutRight, Mem>;

using kssim_perf::median_seconds;
constexpr int warmups = 1;  // the first call allocates the workspace

void run(int w, int h, int batch, int repeat) {
  Exec exec;
  const Images ref = kssim_perf::synthetic_images<Mem>(1, h, w, 1);
  const Images dist = kssim_perf::synthetic_images<Mem>(batch, h, w, 2);
  auto one = [&](const Images& v, int i) {
    return Kokkos::subview(v, Kokkos::make_pair(i, i + 1), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  };
  Kokkos::View<double*, Mem> scores("scores", batch);
  const auto s1 = Kokkos::subview(scores, Kokkos::make_pair(0, 1));
  kssim::Ssimulacra2Options opts;
  opts.check_values = false;
  const double t_uncached = median_seconds(warmups, repeat, [&] { kssim::ssimulacra2(exec, ref, one(dist, 0), s1, opts); });
  kssim::Ssimulacra2Reference<Exec> cached(exec, ref, 0, opts);
  const double t_ref = median_seconds(warmups, repeat, [&] { cached.set_reference(exec, ref); });
  const double t_single = median_seconds(warmups, repeat, [&] {
    for (int i = 0; i < batch; ++i) cached.compare(exec, one(dist, i), Kokkos::subview(scores, Kokkos::make_pair(i, i + 1)));
  });
  const std::size_t bytes_single = cached.workspace_bytes();
  const double t_batch = median_seconds(warmups, repeat, [&] { cached.compare(exec, dist, scores); });
  std::printf("%s %dx%d: uncached %.2f ms/comparison (%.1f/s); reference build %.2f ms; cached, one at a time: %.2f ms/comparison (%.1f/s); cached, batch of %d: %.2f ms/comparison (%.1f/s)\n",
              Exec::name(), w, h, 1e3 * t_uncached, 1 / t_uncached, 1e3 * t_ref, 1e3 * t_single / batch,
              batch / t_single, batch, 1e3 * t_batch / batch, batch / t_batch);
  std::printf("%s %dx%d: memory: reference + 1-image workspace %.1f MB; reference + %d-image workspace %.1f MB\n",
              Exec::name(), w, h, bytes_single / 1e6, batch, cached.workspace_bytes() / 1e6);
  // The scores of the batch: the same synthetic images on every backend, so backends can be compared.
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), scores);
  std::printf("%s %dx%d: scores", Exec::name(), w, h);
  for (int i = 0; i < batch; ++i) std::printf(" %.6f", host(i));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<std::pair<int, int>> sizes = {{1920, 1080}, {3840, 2160}};
  int batch = 10, repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc) {
      int w = 0, h = 0;
      if (std::sscanf(argv[++i], "%dx%d", &w, &h) != 2) return 2;
      sizes = {{w, h}};
    } else if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) {
      batch = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    }
  }
  for (auto [w, h] : sizes) run(w, h, batch, repeat);
  return 0;
}
