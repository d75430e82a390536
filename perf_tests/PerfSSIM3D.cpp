// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 3D SSIM benchmarks: (N, C, D, H, W) volumes, every mode x dtype x padding (see PerfSSIM.hpp).
#include "PerfSSIM.hpp"

namespace kssim_perf {

void register_ssim3d_benchmarks() {
  register_shapes<5>("ssim3d", {
                                   {1, 1, 128, 128, 128},
                                   {2, 3, 96, 96, 96},
                                   {1, 1, 256, 256, 256},  // host: KSSIM_BENCH_ALL=1
                               });
}

}  // namespace kssim_perf
