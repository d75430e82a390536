// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 2D SSIM benchmarks: (N, C, H, W) images, every mode x dtype x padding (see PerfSSIM.hpp).
#include "PerfSSIM.hpp"

namespace kssim_perf {

void register_ssim2d_benchmarks() {
  const std::vector<std::array<int, 4>> shapes{
      {1, 3, 1080, 1920},  // a 1080p RGB frame
      {1, 3, 2160, 3840},  // a 4K RGB frame (host: KSSIM_BENCH_ALL=1)
      {8, 3, 512, 512},    // a batch of crops
      {1, 1, 4096, 4096},  // one large channel (host: KSSIM_BENCH_ALL=1)
      {64, 1, 128, 128},   // many small images: launch-bound
  };
  register_shapes<4>("ssim2d", shapes);
  register_float32_window_shapes<4>("ssim2d", shapes);  // ssim2d-float32: what kssim.fused_ssim runs
}

}  // namespace kssim_perf
