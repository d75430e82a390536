// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The synthetic images and the timing of the SSIMULACRA2 throughput measurements (PerfSsimulacra2.cpp,
// ssimulacra2_pairs.cpp --throughput): one definition, so both programs time the same work and print the
// same scores on every backend.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace kssim_perf {

// (n, 3, h, w) sRGB images in [0, 1]: a smooth pattern plus noise from a fixed LCG, the same on every
// backend (the work does not depend on the content).
template <class Mem>
Kokkos::View<float****, Kokkos::LayoutRight, Mem> synthetic_images(int n, int h, int w, unsigned seed) {
  Kokkos::View<float****, Kokkos::LayoutRight, Mem> d("kssim_perf::synthetic_images", n, 3, h, w);
  auto hv = Kokkos::create_mirror_view(d);
  unsigned s = seed;
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          s = s * 1664525u + 1013904223u;
          const float noise = float(s >> 8) / float(1u << 24) - 0.5f;
          const float v = 0.5f + 0.3f * std::sin(0.01f * x * (c + 1) + 0.013f * y) + 0.05f * (i + 1) * noise;
          hv(i, c, y, x) = std::clamp(v, 0.0f, 1.0f);
        }
  Kokkos::deep_copy(d, hv);
  return d;
}

// Median seconds of `repeat` timed calls of f after `warmups` untimed ones (the first allocates the
// workspace); each timed call ends with a fence.
template <class F>
double median_seconds(int warmups, int repeat, F&& f) {
  for (int i = 0; i < warmups; ++i) f();
  Kokkos::fence("kssim_perf: warm-up");
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    Kokkos::fence("kssim_perf: timed call");
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace kssim_perf
