#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A/B of kernel variants next to perf_tests/gpu/run's job, in the same device call, without building
# kssim_perf_tests once per variant (extra.sh's `variants` step: ~3 min of 16 cores each, after every other
# step). Each variant is perf_tests/schedule_sweep.cpp compiled with nvcc_wrapper against the job's Kokkos 4.6.01
# and its -D definitions (a minute or two, nice 10, while the job's builds run); once the job's timings are
# done the variants run one after the other, `rounds` times alternating, holding the job's GPU lock:
# `schedule_sweep fused flushed`, the fused schedule's fwd and fwd+bwd of the five image shapes, both paddings,
# float, timed as kssim_perf_tests' us_flushed.
#
#   perf_tests/gpu/run start --src carry/src ... &&
#   KSSIM_GPU_SWEEP_VARIANT="main: ; old: -DKSSIM_TUNE_FUSED_STAGE_PAIRS=0" perf_tests/gpu/variant_sweep.sh start
#   (a variant's words that do not start with '-' are environment assignments for its runs, e.g.
#   "bc3: KSSIM_TUNE_FUSED_BACKWARD_CHAIN=3"; the -D words are its build flags; variants with the same build
#   flags share one build)
#   perf_tests/gpu/variant_sweep.sh collect OUT       # OUT/sweep.tar.gz: <name>_<round>.txt, the build logs
#   python3 perf_tests/sweep_table.py OUT/sweep       # medians per variant and case, ratios to the first
#
# WORK is perf_tests/gpu/run's (KSSIM_GPU_WORK, default /tmp/kssim-gpu); KSSIM_GPU_SWEEP_ROUNDS (default 3);
# KSSIM_GPU_SWEEP_ARGS (default "fused flushed"; "" times every schedule back to back, whose printed SSIM and
# gradient norms then compare the variants' results too). A
# call for the sweep alone: `perf_tests/gpu/run start --src carry/src --only unpack,kokkos-4.6.01` first (the
# variants then run once that job has ended).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${KSSIM_GPU_WORK:-/tmp/kssim-gpu}
out=$work/sweep
cmd=${1:-}

job() {
  local kokkos=$work/kokkos-4.6.01 names=() flags=() envs=() v i word f e
  IFS=';' read -r -a variants <<< "${KSSIM_GPU_SWEEP_VARIANT:?name: flags; ...}"
  for v in "${variants[@]}"; do
    i=${v%%:*}; names+=("${i// /}")
    f=; e=
    for word in ${v#*:}; do
      case $word in -*) f="$f $word" ;; *) e="$e $word" ;; esac
    done
    flags+=("$f"); envs+=("$e")
  done
  echo "waiting for $work/stamps/kokkos-4.6.01"
  while [ ! -f "$work/stamps/kokkos-4.6.01" ]; do sleep 3; done
  local lib; lib=$(ls -d "$kokkos"/lib64 "$kokkos"/lib 2>/dev/null | head -1)
  local t0=$SECONDS pids=() built=() j same
  for i in "${!names[@]}"; do
    same=
    for j in "${built[@]}"; do [ "${flags[$j]}" = "${flags[$i]}" ] && same=$j && break; done
    if [ -n "$same" ]; then  # the same build flags as an earlier variant: its binary, once built
      ln -sf "sweep_${names[$same]}" "$out/sweep_${names[$i]}"
      continue
    fi
    built+=("$i")
    # shellcheck disable=SC2086
    ( cd "$repo" && NVCC_APPEND_FLAGS=${NVCC_APPEND_FLAGS:--split-compile=4} nice -n 10 "$kokkos/bin/nvcc_wrapper" \
        -std=c++20 -O3 -DNDEBUG -arch=sm_90 --extended-lambda -fopenmp -Iinclude -I"$kokkos/include" ${flags[$i]} \
        perf_tests/schedule_sweep.cpp -L"$lib" -lkokkoscore -lcuda -ldl -o "$out/sweep_${names[$i]}" \
        > "$out/build_${names[$i]}.log" 2>&1 ) & pids+=($!)
  done
  local failed=0
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || { echo "build of ${names[${built[$i]}]} failed"; failed=1; }; done
  echo "built in $((SECONDS - t0)) s"
  [ $failed = 0 ] || return 1
  echo "waiting for the job's timings (state/bench-torch) or its end (job.rc)"
  while [ ! -f "$work/job.rc" ]; do
    case $(cut -d' ' -f1 "$work/state/bench-torch" 2>/dev/null) in done | failed | skipped) break ;; esac
    sleep 3
  done
  local round name
  for round in $(seq 1 "${KSSIM_GPU_SWEEP_ROUNDS:-3}"); do
    for i in "${!names[@]}"; do
      name=${names[$i]}
      # shellcheck disable=SC2086
      ( exec 9> "$work/gpu.lock"; flock 9
        env LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} ${envs[$i]} "$out/sweep_$name" ${KSSIM_GPU_SWEEP_ARGS-fused flushed} > "$out/${name}_$round.txt" 2>&1 )
      echo "$name round $round: exit $?"
    done
  done
  echo "sweep done in $((SECONDS - t0)) s"
}

case $cmd in
  start)
    mkdir -p "$out"
    setsid "$0" _job > "$out/job.log" 2>&1 < /dev/null &
    echo "variant sweep started (log $out/job.log)" ;;
  _job) job; echo "exit $?" >> "$out/job.log" ;;
  status) tail -5 "$out/job.log" ;;
  collect)  # one archive (the device tool brings back a few files per call)
    dest=${2:?collect needs an output folder}
    mkdir -p "$dest"
    tar -czf "$dest/sweep.tar.gz" -C "$work" --exclude='sweep/sweep_*' sweep
    tar -tzf "$dest/sweep.tar.gz" | tr '\n' ' '; echo ;;
  *) sed -n '2,17p' "$0"; exit 2 ;;
esac
