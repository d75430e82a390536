#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The measurements beyond perf_tests/gpu/run's own steps (its "extra" hook, run from the repository copy):
#   peers/                     fused-ssim's and pytorch-msssim's own suites against kssim (peer_suites.sh)
#   host_profile               torch_host_profile.py: the binding's host time per layer
#   metrics                    time_metrics.py: every metric through PyTorch against the C++ time of the same
#                              kernels (run's bench-cpp.json: KSSIM_GPU_BENCH_FILTER must include them) and
#                              MS-SSIM against pytorch-msssim's; metrics_cpu: MS-SSIM against pytorch-msssim's
#                              on CPU tensors (both on OMP_NUM_THREADS=2 threads); metrics_kernels: the CUDA
#                              kernels of each metric's fwd and fwd+bwd steps (torch.profiler)
#   training_steps             time_training_step.py: a 3DGS training step, kssim against fused-ssim
#   chain_<n>.json             with KSSIM_GPU_EXTRA_SWEEPS=1: the fused schedule's fwd and fwd+bwd with
#                              KSSIM_TUNE_FUSED_FORWARD_CHAIN=n (n = 1 to 6 and 8 tiles per forward team; the
#                              router's rule is in schedules/FusedForward.hpp, fused_forward_chain), and
#                              stages_fwd.json (the stage schedule's forward)
#   ncu/                       ncu_counts.sh: Nsight Compute's counts of kssim's fused kernels and fused-ssim's
#                              (needs a machine where ncu reads the counters)
#   variants                   with KSSIM_GPU_VARIANT="name: -DFLAGS...[; name2: ...]": those kernels against
#                              the build's (the fused schedule's fwd and fwd+bwd, or KSSIM_GPU_VARIANT_FILTER's
#                              benchmarks, every build twice, alternating)
#   env_<name>.json            with KSSIM_GPU_ENV_SWEEP="name: VAR=value ...[; name2: ...]": the build's
#                              benchmarks (KSSIM_GPU_ENV_SWEEP_FILTER, default the fused fwd and fwd+bwd) with
#                              those variables set, e.g. the KSSIM_TUNE_* tile and chain knobs of the router
# Each writes OUT/<name>.txt (and its JSON/CSV); OUT/extra_steps.csv has name,exit status,seconds.
# KSSIM_GPU_EXTRA_ONLY="metrics variants ...": only those steps (a short second call);
# KSSIM_GPU_METRICS_ROUNDS: time_metrics.py's rounds (3).
set -uo pipefail
work=$1 out=$2
export PYTHONPATH=${KSSIM_GPU_PYTHONPATH:?perf_tests/gpu/run sets it}
export OMP_NUM_THREADS=2 OMP_PROC_BIND=false
mkdir -p "$out"
echo "name,status,seconds" > "$out/extra_steps.csv"
step() {  # step NAME COMMAND... (skipped unless NAME is in KSSIM_GPU_EXTRA_ONLY, where that is set)
  local name=$1 t0=$SECONDS rc=0
  shift
  if [ -n "${KSSIM_GPU_EXTRA_ONLY:-}" ] && [[ " $KSSIM_GPU_EXTRA_ONLY " != *" $name "* ]]; then return 0; fi
  echo "== $name: $*"
  "$@" > "$out/$name.txt" 2>&1 || rc=$?
  echo "$name,$rc,$((SECONDS - t0))" >> "$out/extra_steps.csv"
  echo "-- $name: exit $rc in $((SECONDS - t0)) s"; tail -3 "$out/$name.txt"
}
# The router's sweeps (2 min; perf_tests/README.md, "Schedules and the router"): with KSSIM_GPU_EXTRA_SWEEPS=1 only.
if [ "${KSSIM_GPU_EXTRA_SWEEPS:-0}" = 1 ]; then
  for chain in 1 2 3 4 5 6 8; do
    step "chain_$chain" env KSSIM_TUNE_FUSED_FORWARD_CHAIN=$chain "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
      --benchmark_filter='^ssim2d@fused/(fwd|fwd\+bwd)/float/(valid|same)/.*/Cuda/' --benchmark_min_time=0.2s \
      --benchmark_out="$out/chain_$chain.json" --benchmark_out_format=json
  done
  step stages_fwd "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
    --benchmark_filter='^ssim2d@stages/fwd/float/(valid|same)/.*/Cuda/' --benchmark_min_time=0.2s \
    --benchmark_out="$out/stages_fwd.json" --benchmark_out_format=json
fi
# Runtime knobs (KSSIM_GPU_ENV_SWEEP="name: VAR=value ...; ..."): no build, seconds each.
if [ -n "${KSSIM_GPU_ENV_SWEEP:-}" ]; then
  IFS=';' read -r -a sweeps <<< "$KSSIM_GPU_ENV_SWEEP"
  for v in "${sweeps[@]}"; do
    sname=${v%%:*} sname=${sname// /}
    read -r -a assignments <<< "${v#*:}"
    step "env_$sname" env "${assignments[@]}" "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" \
      --benchmark_filter="${KSSIM_GPU_ENV_SWEEP_FILTER:-^ssim2d@fused/(fwd|fwd\+bwd)/float/(valid|same)/.*/Cuda/}" \
      --benchmark_min_time=0.2s --benchmark_out="$out/env_$sname.json" --benchmark_out_format=json
  done
fi
# Variants of the kernels (KSSIM_GPU_VARIANT="name: -DMACRO=... ...", several separated by ";"): each
# kssim_perf_tests built again in WORK/build-variant-<name> with those definitions and the main build's source,
# compiler, Kokkos and prefix (one after the other, in the background, while the steps that time nothing run),
# then the fused forward and fwd+bwd of the main build and of every variant back to back, twice, in one step:
# baseline_{1,2}.json, variant_<name>_{1,2}.json.
cached() { sed -n "s/^$1:[A-Z]*=//p" "$KSSIM_GPU_BUILD/CMakeCache.txt"; }  # a value of the main build's cache
variant_pid="" vnames=()
if [ -n "${KSSIM_GPU_VARIANT:-}" ]; then
  IFS=';' read -r -a variants <<< "$KSSIM_GPU_VARIANT"
  for v in "${variants[@]}"; do vname=${v%%:*}; vnames+=("${vname// /}"); done  # names without blanks
  (
    for i in "${!variants[@]}"; do
      vname=${vnames[$i]} vflags=${variants[$i]#*:}
      vbuild=$work/build-variant-$vname
      echo "== variant $vname: $vflags"
      cmake -S "$(cached CMAKE_HOME_DIRECTORY)" -B "$vbuild" $(command -v ninja > /dev/null && echo -G Ninja) \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)" \
        -DKokkos_ROOT="$(cached Kokkos_ROOT)" -DCMAKE_PREFIX_PATH="$(cached CMAKE_PREFIX_PATH)" \
        -DKSSIM_ENABLE_NATIVE_ARCH=OFF -DKSSIM_ENABLE_CLI=OFF -DKSSIM_ENABLE_MPI=OFF -DKSSIM_ENABLE_TORCH=OFF \
        -DKSSIM_ENABLE_TESTS=OFF -DKSSIM_SPLIT_KERNEL_INSTANCES=ON -DCMAKE_CXX_FLAGS="$vflags" &&
      NVCC_APPEND_FLAGS=${NVCC_APPEND_FLAGS:--split-compile=4} cmake --build "$vbuild" -j "$(nproc)" --target kssim_perf_tests ||
        exit 1
    done
  ) > "$out/variant_build.txt" 2>&1 &
  variant_pid=$!
fi
if command -v ncu > /dev/null; then
  step ncu_counts perf_tests/gpu/ncu_counts.sh "$KSSIM_GPU_BUILD/bin" "$out/ncu"
fi
step peer_suites perf_tests/gpu/peer_suites.sh "$work/src" "$work/peer-run" "$out/peers"
if [ -n "$variant_pid" ]; then
  variant_ab() {  # the baseline and the variants back to back, twice, alternating
    local filter=${KSSIM_GPU_VARIANT_FILTER:-'^ssim2d@fused/(fwd|fwd\+bwd)/float/(valid|same)/.*/Cuda/'} round vname
    wait "$variant_pid" || { echo "variant build failed: tail of $out/variant_build.txt"; tail -20 "$out/variant_build.txt"; return 1; }
    for round in 1 2; do
      "$KSSIM_GPU_BUILD/bin/kssim_perf_tests" --benchmark_filter="$filter" --benchmark_min_time=0.2s \
        --benchmark_out="$out/baseline_$round.json" --benchmark_out_format=json > /dev/null
      for vname in "${vnames[@]}"; do
        "$work/build-variant-$vname/bin/kssim_perf_tests" --benchmark_filter="$filter" --benchmark_min_time=0.2s \
          --benchmark_out="$out/variant_${vname}_$round.json" --benchmark_out_format=json > /dev/null
      done
    done
    echo "variants ${vnames[*]} ($KSSIM_GPU_VARIANT): baseline_{1,2}.json, variant_<name>_{1,2}.json"
  }
  step variants variant_ab
fi
step host_profile python3 perf_tests/torch_host_profile.py --json "$out/host_profile.json"
step metrics python3 perf_tests/time_metrics.py --kssim-json "$out/../bench-cpp.json" --json "$out/metrics.json" \
  --csv "$out/metrics.csv" --rounds "${KSSIM_GPU_METRICS_ROUNDS:-3}"
step metrics_kernels python3 perf_tests/time_metrics.py --kernels "$out/metrics_kernels.json"
step metrics_cpu python3 perf_tests/time_metrics.py --device cpu --cases ms_ssim,kssim_msssim_dropin,pytorch_msssim \
  --shapes 1x3x1080x1920,8x3x512x512 --iters 5 --json "$out/metrics_cpu.json" --csv "$out/metrics_cpu.csv"
step training_steps python3 perf_tests/time_training_step.py --csv "$out/training_steps.csv" \
  --json "$out/training_steps.json"
exit 0
