// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Every tuning switch of kssim in one place. They exist for A/B runs of kernel variants
// (perf_tests/gpu/variant_sweep.sh, perf_tests/schedule_sweep.cpp) and for tests that force a schedule's
// choices; nothing else should set them. Two kinds:
//  - compile-time constants: -DKSSIM_TUNE_<NAME>=<value> replaces the default below;
//  - environment variables, read when a plan is made (kssim::impl::tuning below).
// Each default is the variant those runs kept; the measurements are in perf_tests/README.md, "Kernel variants"
// (kept) and "Tried and rejected" (the others). The comments where a switch is used say how the code depends on
// it.

#include <cstdlib>
#include <optional>

// Compile-time switches.

// Rows of a host tile of the fused schedules: 64, so the halo rows add a sixth to the row blur, not a third.
#if !defined(KSSIM_TUNE_HOST_FUSED_ROWS)
#define KSSIM_TUNE_HOST_FUSED_ROWS 64
#endif
// Columns of a host tile of the fused schedules: 128, rows long enough for the hardware prefetcher, tiles that stay
// in the L2 cache (64 and 512 columns were slower on 2 CPU cores: FusedTiles, FusedForward.hpp).
#if !defined(KSSIM_TUNE_HOST_FUSED_COLS)
#define KSSIM_TUNE_HOST_FUSED_COLS 128
#endif
// Launch bound of the GPU fused forward without partial derivatives, in bytes of value per team per
// multiprocessor (fused_min_teams): 20, 5 float teams (2 and 4 were slower: "Kernel variants").
#if !defined(KSSIM_TUNE_FUSED_MIN_TEAMS)
#define KSSIM_TUNE_FUSED_MIN_TEAMS 20
#endif
// Launch bound of the GPU fused forward with partial derivatives: 16 bytes, 4 float teams, 64 registers, no spills
// (at 20 the fwd+bwd took 0.5-5% more: "Kernel variants").
#if !defined(KSSIM_TUNE_FUSED_PARTIALS_MIN_TEAMS)
#define KSSIM_TUNE_FUSED_PARTIALS_MIN_TEAMS 16
#endif
// Launch bound of the GPU fused backward: 16 bytes, 4 float teams, 64 registers, no spills (as the forward with
// partials, measured with it: "Kernel variants").
#if !defined(KSSIM_TUNE_FUSED_BACKWARD_MIN_TEAMS)
#define KSSIM_TUNE_FUSED_BACKWARD_MIN_TEAMS 16
#endif
// Launch bound of the slice-fused forward of volumes: 16 bytes, 4 float teams, no spills (20 bytes spilled and was
// no faster: "Kernel variants").
#if !defined(KSSIM_TUNE_FUSED_SLICES_MIN_TEAMS)
#define KSSIM_TUNE_FUSED_SLICES_MIN_TEAMS 16
#endif
// Launch bound of the stage schedule's map pass: 16 bytes, 4 float teams (20 and 24 bytes were no faster on the
// volumes' depth pass: "Kernel variants").
#if !defined(KSSIM_TUNE_MAP_PASS_MIN_TEAMS)
#define KSSIM_TUNE_MAP_PASS_MIN_TEAMS 16
#endif
// Masked SSIM's weighted fused forward without partial derivatives (evaluation) as the map-only kernel of SSIM's
// (fused_forward, FusedForward.hpp; 48 registers, 8 / 16 bytes of spills): 1; 0, the kernel with partials and its
// launch bound, whose forward took 1.05-1.10x the time on the four large perf_tests shapes (H100; 64x1x128x128
// 0.97-1.01x).
#if !defined(KSSIM_TUNE_FUSED_WEIGHTED_MAP_ONLY)
#define KSSIM_TUNE_FUSED_WEIGHTED_MAP_ONLY 1
#endif
// Launch bound of the GPU fused forward of normalized statistics (FusedNormalizedForward.hpp), bytes of value per
// team per multiprocessor as fused_min_teams: 8, 128 registers per thread. At 16 (64 registers) its 11-tap kernel
// spilled 748 / 928 bytes (ptxas -v; 80 registers: 400 / 496) and took 1.20-1.43x the time (H100, forward).
#if !defined(KSSIM_TUNE_FUSED_NORMALIZED_MIN_TEAMS)
#define KSSIM_TUNE_FUSED_NORMALIZED_MIN_TEAMS 8
#endif
// Launch bound of the stage schedule's map pass of normalized statistics (MaskedColumnBlur.hpp), bytes of value
// per team per multiprocessor: 8, 128 registers per thread. At 16 (64 registers, as SSIM's map pass) its 11-tap
// kernel spilled 272 / 380 bytes (ptxas -v), and the stage forward took 1.01-1.14x the time (H100, float, the five
// perf_tests shapes, both paddings; perf_tests/README.md, "MS-SSIM and masked SSIM").
#if !defined(KSSIM_TUNE_NORMALIZED_MAP_PASS_MIN_TEAMS)
#define KSSIM_TUNE_NORMALIZED_MAP_PASS_MIN_TEAMS 8
#endif
// Outputs per thread along a column in the fused forward's column pass (float GPU tiles): 4 (8 took 0.96-1.07x the
// time: "Tried and rejected").
#if !defined(KSSIM_TUNE_FUSED_FORWARD_COL_ROWS)
#define KSSIM_TUNE_FUSED_FORWARD_COL_ROWS 4
#endif
// Outputs per work item of the fused backward's adjoint column pass (float GPU tiles, K = 3): 8, each staged row
// read from scratch once for 8 outputs, fwd+bwd 2.5-4.6% faster than with 4 ("Kernel variants").
#if !defined(KSSIM_TUNE_FUSED_BACKWARD_COL_ROWS)
#define KSSIM_TUNE_FUSED_BACKWARD_COL_ROWS 8
#endif
// 1: the GPU fused forward without partial derivatives is a kernel of its own, which spills less than the one with
// them (0: one kernel for both, for A/B runs; "Kernel variants").
#if !defined(KSSIM_TUNE_FUSED_FORWARD_MAP_ONLY)
#define KSSIM_TUNE_FUSED_FORWARD_MAP_ONLY 1
#endif
// 1: the fused forward with map weights (masked SSIM) loads a block's weights before its column blur, so that the
// loads' latency overlaps the blur (0: after it, where the map formula needs them; for A/B runs).
#if !defined(KSSIM_TUNE_FUSED_WEIGHTS_EARLY)
#define KSSIM_TUNE_FUSED_WEIGHTS_EARLY 1
#endif
// 1: the GPU fused forward with map weights stages each tile's weights and their sums in scratch with the images,
// and the column pass reads them there (7- and 11-tap kernels: no spills instead of 28 / 76 bytes, ptxas -v;
// StagedWeightScratch, FusedForward.hpp). 0: the column pass loads and sums them (KSSIM_TUNE_FUSED_WEIGHTS_EARLY).
// Timed against 0 on a GPU (perf_tests/README.md, "MS-SSIM and masked SSIM"): masked fwd+bwd 0.94-0.99x the time,
// forwards 0.91-1.01x, SSIM's unchanged; the CUDA unit tests pass with it ("Tests on the GPU").
#if !defined(KSSIM_TUNE_FUSED_WEIGHTS_STAGED)
#define KSSIM_TUNE_FUSED_WEIGHTS_STAGED 1
#endif
// Elements added to a GPU row-plane pitch of a multiple of 32 (0: none): 16, so that rows the fused backward stages
// at the same columns are not a multiple of 128 bytes apart (same padding 2.0-2.6% faster: "Kernel variants").
#if !defined(KSSIM_TUNE_ROW_PITCH_SKEW)
#define KSSIM_TUNE_ROW_PITCH_SKEW 16
#endif
// Rows ahead that host staging loops prefetch: 4, the tiles' short rows being too short for the hardware
// prefetcher (2 and 8 the same within the noise on 2 CPU cores: staging_prefetch_rows, AxisTile.hpp).
#if !defined(KSSIM_TUNE_PREFETCH_ROWS)
#define KSSIM_TUNE_PREFETCH_ROWS 4
#endif

// Environment switches, read when a plan is made.
namespace kssim::impl::tuning {

// The value of environment variable `name` as std::atoi reads it, or `fallback` where it is not set.
inline int env_override(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value ? std::atoi(value) : fallback;
}

// Environment variable `name` as a yes/no switch: unset or empty, none; otherwise whether std::atoi reads it
// as other than 0.
inline std::optional<bool> env_switch(const char* name) {
  const char* value = std::getenv(name);
  if (value && *value) return std::atoi(value) != 0;
  return std::nullopt;
}

// KSSIM_TUNE_FUSED_FORWARD_ROWS=n: the fused forward's tile height (0 or unset: the tallest that fits; shorter
// tiles in long chains took 1.03-3.26x its time: "Tried and rejected").
inline int forced_forward_rows() { return env_override("KSSIM_TUNE_FUSED_FORWARD_ROWS", 0); }

// KSSIM_TUNE_FUSED_FORWARD_CHAIN=n: the fused forward's tiles per team (0 or unset: fused_forward_chain's choice
// by the problem's waves, from the sweep of every chain 1-8: "Schedules and the router").
inline int forced_forward_chain() { return env_override("KSSIM_TUNE_FUSED_FORWARD_CHAIN", 0); }

// KSSIM_TUNE_FUSED_FORWARD_FINISH=0 / 1: whether the fused forward's last team finishes the mean (unset: on GPUs
// for one-wave problems only; on many-wave ones the forwards took 7-13% longer: "Tried and rejected").
inline std::optional<bool> forced_forward_finish() { return env_switch("KSSIM_TUNE_FUSED_FORWARD_FINISH"); }

// KSSIM_TUNE_FUSED_BACKWARD_CHAIN=n: the fused backward's tiles per team (unset: 1; 2 and 4 were no faster:
// "Kernel variants").
inline int forced_backward_chain() { return env_override("KSSIM_TUNE_FUSED_BACKWARD_CHAIN", 0); }

}  // namespace kssim::impl::tuning
