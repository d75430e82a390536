// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The one place that decides which schedule runs a problem (Options::schedule == Auto), and that checks a
// forced choice. The candidates:
//   - the stage schedule (Plan.hpp: row blur, column blur [, depth blur]; adjoint passes): any problem;
//   - the fused forward and fused backward schedules (schedules/): 2D images whose tile, with the window's
//     halo, fits the backend's team scratch;
//   - for volumes, the slice-fused schedule (FusedSlices.hpp: the same kernels per depth slice, the depth
//     pass a stage) where fused_slices_compiled has its kernel; the ScheduleChoice fields then describe
//     those kernels' tiles and chains (Schedule::Fused names it for volumes);
//   - masked SSIM with normalized statistics (choose_normalized_forward): its fused forward for images
//     (FusedNormalizedForward.hpp), else its stage schedule; its backward is always the stage schedule's.
// The measurements behind the choices are in perf_tests/README.md, "Schedules and the router".

#include <kssim/Options.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/stages/MapBlock.hpp>
#include <kssim/impl/schedules/FusedBackward.hpp>
#include <kssim/impl/schedules/FusedForward.hpp>
#include <kssim/impl/schedules/FusedNormalizedForward.hpp>
#include <kssim/impl/schedules/FusedSlices.hpp>

#include <stdexcept>
#include <string>

namespace kssim::impl {

struct ScheduleChoice {
  int fused_forward_rows = 0;   // > 0: the fused forward schedule with tiles of this height
  int fused_backward_rows = 0;  // > 0: the fused backward schedule with tiles of this height
  int fused_forward_chain = 1;  // tiles per team of the fused forward (fused_forward_chain)
  int fused_backward_chain = 1;  // tiles per team of the fused backward (fused_backward_chain)
  bool fused_forward_finishes = false;  // its last team writes the mean (fused_forward_finishes): no sum_map
  bool fused_forward() const { return fused_forward_rows > 0; }
  bool fused_backward() const { return fused_backward_rows > 0; }
};

template <class ExecSpace, class T>
ScheduleChoice choose_schedule(const ExecSpace& exec, const Geometry& g, const Options& opts, PartialPlanes wanted) {
  ScheduleChoice choice;
  if (opts.schedule == Schedule::Stages) return choice;
  const bool compiled = !g.volumetric || fused_slices_compiled<ExecSpace, T>(g.window);
  const int forward_rows = compiled ? fused_forward_rows<ExecSpace, T>(exec, g.window) : 0;
  const int backward_rows = !compiled || !wanted.any() ? 0
                            : wanted.count() == 4      ? fused_backward_rows<ExecSpace, T, 4>(exec, g.window)
                                                       : fused_backward_rows<ExecSpace, T, 3>(exec, g.window);
  if (opts.schedule == Schedule::Fused) {
    if (forward_rows == 0 || (wanted.any() && backward_rows == 0))
      throw std::invalid_argument(std::string("kssim: the fused schedule cannot run this problem (") +
                                  (!compiled ? "this backend fuses volumes for float and window_size 11 only"
                                             : "its tile for window_size " + std::to_string(g.window) +
                                                   " exceeds this backend's team scratch") +
                                  "); use Schedule::Auto or Schedule::Stages");
    const int chain = fused_forward_chain<ExecSpace, T>(exec, g, forward_rows, wanted.any());
    return {forward_rows, backward_rows, chain, fused_backward_chain(),
            fused_forward_finishes<ExecSpace, T>(exec, g, forward_rows, chain)};
  }
  // Auto, from the measurements in perf_tests/README.md, "Schedules and the router":
  //  - tiles shorter than their halo (double on GPUs, wide windows) repeat the row blur of the halo rows
  //    more than once over: never;
  //  - with gradients, fused forward and backward (GPU, float: 0.88-0.97x the stage schedule's fwd+bwd
  //    time on every shape and padding; 2 host cores, 1080p: 0.89-0.98x);
  //  - forward only: fused too (hosts 0.80-0.90x the stages' time; on GPUs because the fused forward carries
  //    its halo rows down a chain of tiles, fused_forward_chain);
  //  - volumes: slice-fused, by the same rules (FusedSlices.hpp; perf_tests/README.md, "Volumes").
  const auto worth = [&](int rows) { return rows > 0 && rows >= g.window - 1; };
  choice.fused_forward_rows = worth(forward_rows) ? forward_rows : 0;
  choice.fused_backward_rows = worth(backward_rows) ? backward_rows : 0;
  if (choice.fused_backward()) choice.fused_backward_chain = fused_backward_chain();
  if (choice.fused_forward()) {
    choice.fused_forward_chain = fused_forward_chain<ExecSpace, T>(exec, g, forward_rows, wanted.any());
    choice.fused_forward_finishes =
        fused_forward_finishes<ExecSpace, T>(exec, g, forward_rows, choice.fused_forward_chain);
  }
  return choice;
}

// Masked SSIM with normalized statistics (MaskedPlan.hpp): the fused forward's tile rows, or 0 for the stage
// schedule. Auto takes the fused forward on hosts for images whose tile is at least as tall as its halo, by the
// rule above (2 host cores, 1x3x1080x1920 float: 0.77-0.88x the stages' time), and the stage schedule on GPUs,
// where the fused forward's 16-row float tiles took 632 us against the stages' ~340-435 (H100, 1x3x1080x1920;
// perf_tests/README.md, "MS-SSIM and masked SSIM"); volumes run the stage schedule (a depth pass of five planes
// per slice has no fused kernel).
template <class ExecSpace, class T>
int choose_normalized_forward(const ExecSpace& exec, const Geometry& g, const Options& opts) {
  if (opts.schedule == Schedule::Stages || (opts.schedule == Schedule::Auto && is_gpu_space_v<ExecSpace>)) return 0;
  const int rows = g.volumetric ? 0 : fused_normalized_rows<ExecSpace, T>(exec, g.window);
  if (opts.schedule == Schedule::Fused) {
    if (rows == 0)
      throw std::invalid_argument(std::string("kssim: the fused schedule cannot run this problem (") +
                                  (g.volumetric ? "MaskMode::Normalized fuses images only, not volumes"
                                                : "its tile for window_size " + std::to_string(g.window) +
                                                      " exceeds this backend's team scratch") +
                                  "); use Schedule::Auto or Schedule::Stages");
    return rows;
  }
  return rows >= g.window - 1 ? rows : 0;
}

}  // namespace kssim::impl
