#!/usr/bin/env bash
# The measurements beyond perf_tests/gpu/run's own steps (its "extra" hook, run from the repository copy):
#   peers/                     fused-ssim's and pytorch-msssim's own suites against kssim (peer_suites.sh)
#   host_profile_caller        torch_host_profile.py: the binding's host time per layer
#   training_steps             time_training_step.py: a 3DGS training step, kssim against fused-ssim
#   chain_<n>.json             the fused schedule's fwd and fwd+bwd with KSSIM_TUNE_FUSED_FORWARD_CHAIN=n
#                              (n = 1, 2, 4, 8 tiles per forward team; the router's rule is in
#                              schedules/FusedForward.hpp, fused_forward_chain)
#   ncu_counts                 Nsight Compute's counts (instructions, FFMA, shared loads and stores, DRAM bytes,
#                              IPC) of kssim's fused forward and backward kernels (11 taps) at 1x3x1080x1920, both
#                              paddings, and of fused-ssim's kernels on the same images (needs a machine where
#                              ncu reads the counters): the instruction table of perf_tests/RESULTS.md
#   ncu_sass_forward           executed instructions per SASS instruction of the fused forward (same padding):
#                              the instruction mix behind that table
# Each writes OUT/<name>.txt (and its JSON/CSV); OUT/extra_steps.csv has name,exit status,seconds.
set -uo pipefail
work=$1 out=$2
export PYTHONPATH=${KSSIM_GPU_PYTHONPATH:?perf_tests/gpu/run sets it}
export OMP_NUM_THREADS=2 OMP_PROC_BIND=false
mkdir -p "$out"
echo "name,status,seconds" > "$out/extra_steps.csv"
step() {  # step NAME COMMAND...
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "== $name: $*"
  "$@" > "$out/$name.txt" 2>&1 || rc=$?
  echo "$name,$rc,$((SECONDS - t0))" >> "$out/extra_steps.csv"
  echo "-- $name: exit $rc in $((SECONDS - t0)) s"; tail -3 "$out/$name.txt"
}
for chain in 1 2 4 8; do
  step "chain_$chain" env KSSIM_TUNE_FUSED_FORWARD_CHAIN=$chain "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
    --benchmark_filter='^ssim2d@fused/(fwd|fwd\+bwd)/float/(valid|same)/.*/Cuda/' --benchmark_min_time=0.2s \
    --benchmark_out="$out/chain_$chain.json" --benchmark_out_format=json
done
step stages_fwd "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
  --benchmark_filter='^ssim2d@stages/fwd/float/(valid|same)/.*/Cuda/' --benchmark_min_time=0.2s \
  --benchmark_out="$out/stages_fwd.json" --benchmark_out_format=json
if command -v ncu > /dev/null; then
  metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_global_ld.sum,dram__bytes.sum,sm__inst_executed.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size
  step ncu_counts timeout 240 ncu --clock-control none --kernel-name-base demangled \
    --kernel-name 'regex:FixedTaps<11, ?kssim::impl::Fused(Forward|Backward)' --launch-skip 6 --launch-count 6 --csv \
    --metrics "$metrics" "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
    --benchmark_filter='^ssim2d@fused/(fwd|fwd\+bwd)/float/(valid|same)/1x3x1080x1920/Cuda/' --benchmark_min_time=3x
  step ncu_sass_forward timeout 180 ncu --section SourceCounters --page source --print-source sass --csv \
    --kernel-name-base demangled --kernel-name 'regex:FixedTaps<11, ?kssim::impl::FusedForward' --launch-skip 2 \
    --launch-count 1 "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
    --benchmark_filter='^ssim2d@fused/fwd/float/same/1x3x1080x1920/Cuda/' --benchmark_min_time=3x
  step ncu_fused_ssim timeout 120 ncu --clock-control none --kernel-name 'regex:fusedssim' --launch-skip 2 \
    --launch-count 4 --csv --metrics "$metrics" python3 -c '
import torch
from fused_ssim import fused_ssim
a = torch.rand(1, 3, 1080, 1920, device="cuda"); b = torch.rand(1, 3, 1080, 1920, device="cuda", requires_grad=True)
for padding in ("same", "valid"):
    with torch.no_grad():
        fused_ssim(a, b, padding=padding, train=False)
    fused_ssim(a, b, padding=padding, train=True).backward()
torch.cuda.synchronize()'
fi
step peer_suites perf_tests/gpu/peer_suites.sh "$work/src" "$work/peer-run" "$out/peers"
step host_profile_caller env KSSIM_TORCH_HOME_STREAM=caller python3 perf_tests/torch_host_profile.py \
  --json "$out/host_profile_caller.json"
step training_steps python3 perf_tests/time_training_step.py --csv "$out/training_steps.csv" \
  --json "$out/training_steps.json"
exit 0
