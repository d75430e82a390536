// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Issue 15 item 9 on the H200: what comparing many images against one reference saves per image, at the
// library level (what `kssim compare REF D1 ... Dk` does: REF uploaded once, one kssim::SSIM object) against
// a fresh upload of REF and a fresh object per pair (what k separate invocations do on the device side).
#include <kssim/kssim.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include <algorithm>
using Exec = Kokkos::DefaultExecutionSpace;
using Img = Kokkos::View<float****, Kokkos::LayoutRight, Exec::memory_space>;
using HostImg = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;
int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int N = 1, C = 3, H = 1080, W = 1920, K = 10, R = 5;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0, 1);
  auto host_image = [&] { HostImg h("h", N, C, H, W); for (std::size_t i = 0; i < h.size(); ++i) h.data()[i] = u(rng); return h; };
  auto ref_h = host_image();
  std::vector<HostImg> d_h;
  for (int k = 0; k < K; ++k) d_h.push_back(host_image());
  Exec exec;
  double sink = 0;
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  { kssim::SSIM<Exec, float> warm(exec, {N, C, H, W}); Img a("a", N, C, H, W); warm.forward(a, a); sink += warm.value_on_host(); }
  std::vector<double> separate, once;
  for (int r = 0; r < R; ++r) {
    auto t0 = now();
    for (int k = 0; k < K; ++k) {  // per pair: upload REF and Dk, a new object
      Img ref("ref", N, C, H, W), d("d", N, C, H, W);
      Kokkos::deep_copy(exec, ref, ref_h);
      Kokkos::deep_copy(exec, d, d_h[k]);
      kssim::SSIM<Exec, float> loss(exec, {N, C, H, W}, {}, kssim::Gradients::None);
      loss.forward(ref, d);
      sink += loss.value_on_host();
    }
    auto t1 = now();
    {
      Img ref("ref", N, C, H, W), d("d", N, C, H, W);  // REF once, one object
      Kokkos::deep_copy(exec, ref, ref_h);
      kssim::SSIM<Exec, float> loss(exec, {N, C, H, W}, {}, kssim::Gradients::None);
      for (int k = 0; k < K; ++k) {
        Kokkos::deep_copy(exec, d, d_h[k]);
        loss.forward(ref, d);
        sink += loss.value_on_host();
      }
    }
    auto t2 = now();
    separate.push_back(ms(t0, t1) / K);
    once.push_back(ms(t1, t2) / K);
  }
  std::sort(separate.begin(), separate.end());
  std::sort(once.begin(), once.end());
  std::printf("%s 1x3x1080x1920 float, %d images, median of %d rounds: per image separate %.3f ms, REF once %.3f ms, saving %.3f ms (sink %.3f)\n",
              Exec::name(), K, R, separate[R / 2], once[R / 2], separate[R / 2] - once[R / 2], sink);
}
