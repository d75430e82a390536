#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Nsight Compute's counts of the SSIM forward and backward kernels at 1x3x1080x1920 float (11 taps), kssim's
# and fused-ssim's, for the instruction table of perf_tests/README.md ("Where the time goes"):
#   perf_tests/gpu/ncu_counts.sh BIN OUT     (BIN: kssim's build bin/ with kssim_perf_tests; OUT: a folder)
# writes OUT/ncu_kssim_<mode>_<padding>.csv (kssim's fused schedule, past the first-use self-check's launches), OUT/ncu_fused_ssim.csv (fused-ssim, if importable: forward and backward, both
# paddings) and OUT/ncu_sass_forward.csv, ncu_sass_backward.csv (executed instructions per SASS instruction
# of kssim's fused forward and backward, same padding: the instruction mix), ncu_kssim_l1_fwd_same.csv,
# ncu_sass_l1_forward.csv (the same for the fused L1 + SSIM loss's forward), ncu_kssim_masked_fwd_same.csv and
# ncu_sass_masked_forward.csv (masked SSIM's weighted forward). perf_tests/ncu_table.py turns them into the table.
set -uo pipefail
bin=${1:?kssim build bin/} out=${2:?output folder}
mkdir -p "$out"
metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum
metrics+=,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum
metrics+=,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
metrics+=,smsp__sass_inst_executed_op_global_ld.sum,dram__bytes.sum,sm__inst_executed.avg.per_cycle_active
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size
# Counts of COUNT launches of the 11-tap KERNELS (a regex) past the first SKIP, in the benchmarks FILTER:
# counts KERNELS SKIP COUNT FILTER NAME writes OUT/NAME.csv. Skipping 8 passes the first-use self-check's launches of
# the same kernels (a small problem through both schedules); with fwd+bwd, two consecutive launches are one
# forward and one backward whatever came before.
counts() {
  timeout 120 ncu --clock-control none --kernel-name-base demangled --launch-skip "$2" --launch-count "$3" \
    --kernel-name "regex:FixedTaps<[(]int[)]11, kssim::impl::$1" --csv --metrics "$metrics" \
    "$bin/kssim_perf_tests" --benchmark_filter="$4" --benchmark_min_time=6x > "$out/$5.csv" 2> "$out/$5.log"
}
for mode in fwd fwd+bwd; do
  for padding in valid same; do
    if [ "$mode" = fwd ]; then kernels=FusedForward count=1; else kernels='Fused(Forward|Backward)' count=2; fi
    counts "$kernels" 8 "$count" "^ssim2d@fused/${mode/+/\\+}/float/$padding/1x3x1080x1920/Cuda/" \
      "ncu_kssim_${mode/+/}_$padding"
  done
done
# Executed instructions per SASS instruction of one launch: sass KERNEL SKIP FILTER NAME writes OUT/NAME.csv.
sass() {
  timeout 120 ncu --section SourceCounters --page source --print-source sass --csv --kernel-name-base demangled \
    --kernel-name "regex:FixedTaps<[(]int[)]11, kssim::impl::$1" --launch-skip "$2" --launch-count 1 \
    "$bin/kssim_perf_tests" --benchmark_filter="$3" --benchmark_min_time=6x > "$out/$4.csv" 2> "$out/$4.log"
}
# The fused L1 + SSIM loss's forward (the same kernel with its L1 tile sums on), and masked SSIM's weighted forward
# (MaskMode::Weights: the same kernel with map weights and their sums): their counts and their SASS.
counts FusedForward 8 1 '^l1ssim2d@fused/fwd/float/same/1x3x1080x1920/Cuda/' ncu_kssim_l1_fwd_same
sass FusedForward 8 '^l1ssim2d@fused/fwd/float/same/1x3x1080x1920/Cuda/' ncu_sass_l1_forward
counts FusedForward 8 1 '^masked/weights/fwd/float/same/1x3x1080x1920/Cuda/' ncu_kssim_masked_fwd_same
sass FusedForward 8 '^masked/weights/fwd/float/same/1x3x1080x1920/Cuda/' ncu_sass_masked_forward
sass FusedForward 8 '^ssim2d@fused/fwd/float/same/1x3x1080x1920/Cuda/' ncu_sass_forward
sass FusedBackward 4 '^ssim2d@fused/fwd\+bwd/float/same/1x3x1080x1920/Cuda/' ncu_sass_backward
# The small-image forward (64x1x128x128 same), every kernel of a few forwards (shifts, fused forward, sum), for
# where its time goes; fused-ssim's forward at the same shape below.
timeout 120 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:kssim --launch-skip 60 \
  --launch-count 9 --csv --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size \
  "$bin/kssim_perf_tests" --benchmark_filter='^ssim2d@fused/fwd/float/same/64x1x128x128/Cuda/' \
  --benchmark_min_time=40x > "$out/ncu_kssim_small_forward.csv" 2> "$out/ncu_kssim_small_forward.log"
if python3 -c 'import fused_ssim' 2> /dev/null; then
  timeout 120 ncu --clock-control none --kernel-name regex:fusedssim --launch-skip 5 --launch-count 3 --csv \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size python3 -c '
import torch
from fused_ssim import fused_ssim
a = torch.rand(64, 1, 128, 128, device="cuda"); b = torch.rand(64, 1, 128, 128, device="cuda")
with torch.no_grad():
    for _ in range(8):
        fused_ssim(a, b, padding="same", train=False)
torch.cuda.synchronize()' > "$out/ncu_fused_ssim_small_forward.csv" 2> "$out/ncu_fused_ssim_small_forward.log"
fi
if python3 -c 'import fused_ssim' 2> /dev/null; then
  # Launches: same fwd, same fwd+bwd (2), valid fwd, valid fwd+bwd (2); the first two are a warm-up.
  timeout 120 ncu --clock-control none --kernel-name regex:fusedssim --launch-skip 3 --launch-count 6 --csv \
    --metrics "$metrics" python3 -c '
import torch
from fused_ssim import fused_ssim
a = torch.rand(1, 3, 1080, 1920, device="cuda"); b = torch.rand(1, 3, 1080, 1920, device="cuda", requires_grad=True)
for padding in ("same", "same", "valid"):
    with torch.no_grad():
        fused_ssim(a, b, padding=padding, train=False)
    fused_ssim(a, b, padding=padding, train=True).backward()
torch.cuda.synchronize()' > "$out/ncu_fused_ssim.csv" 2> "$out/ncu_fused_ssim.log"
fi
ls -la "$out"
