#!/usr/bin/env bash
# The measurements beyond perf_tests/gpu/run's own steps (its "extra" hook, run from the repository copy):
#   peers/                     fused-ssim's and pytorch-msssim's own suites against kssim (peer_suites.sh)
#   host_profile_{caller,own}  torch_host_profile.py: the binding's host time per layer, with each
#                              KSSIM_TORCH_HOME_STREAM (src/python/csrc/StreamOrder.hpp)
#   pytest_own_stream          the CUDA binding tests with KSSIM_TORCH_HOME_STREAM=own
#   training_steps             time_training_step.py: a 3DGS training step, kssim against fused-ssim
#   ssimulacra2_pairs          kssim_ssimulacra2_pairs on the pairs carried in carry/s2_pairs (if both exist)
#   ncu_counts                 Nsight Compute's instruction counts of the fused forward and backward kernels at
#                              1x3x1080x1920 (the kernels' issue; needs a machine where ncu reads the counters).
#                              The first run (2026-12-03) matched the self-check's LayoutProbe<FusedForward>
#                              kernels: the name filter now wants the ParallelFor of the functor itself.
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
step peer_suites perf_tests/gpu/peer_suites.sh "$work/src" "$work/peer-run" "$out/peers"
step host_profile_caller env KSSIM_TORCH_HOME_STREAM=caller python3 perf_tests/torch_host_profile.py \
  --json "$out/host_profile_caller.json"
step host_profile_own env KSSIM_TORCH_HOME_STREAM=own python3 perf_tests/torch_host_profile.py \
  --json "$out/host_profile_own.json"
step pytest_own_stream env KSSIM_TORCH_HOME_STREAM=own KSSIM_TEST_DEVICES=cuda \
  python3 -m pytest -q -p no:cacheprovider unit_tests/python/test_cuda.py unit_tests/python/test_peer_suites.py
step training_steps python3 perf_tests/time_training_step.py --csv "$out/training_steps.csv" \
  --json "$out/training_steps.json"
pairs=${KSSIM_GPU_REPO:-.}/carry/s2_pairs
if [ -x "$KSSIM_GPU_BUILD/bin/kssim_ssimulacra2_pairs" ] && [ -d "$pairs" ]; then
  step ssimulacra2_pairs "$KSSIM_GPU_BUILD/bin/kssim_ssimulacra2_pairs" "$pairs" --throughput
fi
if command -v ncu > /dev/null; then
  step ncu_counts timeout 240 ncu --clock-control none --kernel-name-base demangled \
    --kernel-name 'regex:ParallelFor<kssim::impl::Fused(Forward|Backward)' --launch-skip 8 --launch-count 4 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" --benchmark_filter='^ssim2d/fwd\+bwd/float/(valid|same)/1x3x1080x1920/Cuda/' \
    --benchmark_min_time=3x
fi
exit 0
