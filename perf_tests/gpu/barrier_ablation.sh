#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On the device: the fused forward timed with and without its team barriers (ablate_barriers.py), in one call
# that fits a worn budget (about 7 minutes on 16 cores): Kokkos 4.6.01 from carry/src, a copy of the tree with
# the ablation switches, then variant_sweep.sh's alternating rounds of the five variants (base; nb: all three
# barriers removed; nst, nrc, nte: one each), fused schedule, L2 flushed. Prints the medians' table and leaves
# $OUT/barrier-ablation.tar.gz.
#   run(command="perf_tests/gpu/barrier_ablation.sh", carry=["carry"])      # the session tool
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${KSSIM_GPU_WORK:-/tmp/kssim-gpu}
copy=/tmp/kssim-ablation
rm -rf "$copy" && mkdir -p "$copy" /tmp/ablation-out
( cd "$repo" && tar --exclude=./carry --exclude=./build --exclude=./.git -cf - . ) | tar -xf - -C "$copy"
python3 "$repo/perf_tests/gpu/ablate_barriers.py" "$copy" || exit 1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee /tmp/ablation-out/gpu.csv
"$copy/perf_tests/gpu/run" start --src "$repo/carry/src" --only unpack,kokkos-4.6.01 > /dev/null || exit 1
abl="-DKSSIM_ABLATION"
KSSIM_GPU_SWEEP_ROUNDS=${KSSIM_GPU_SWEEP_ROUNDS:-2} KSSIM_GPU_SWEEP_VARIANT="base: ; \
nb: $abl -DKSSIM_ABL_NO_BARRIERS; nst: $abl -DKSSIM_ABL_NO_STAGE_BARRIER; \
nrc: $abl -DKSSIM_ABL_NO_ROW_COL_BARRIER; nte: $abl -DKSSIM_ABL_NO_TILE_END_BARRIER" \
  "$copy/perf_tests/gpu/variant_sweep.sh" start
for _ in $(seq 1 170); do grep -q '^exit' "$work/sweep/job.log" 2>/dev/null && break; sleep 3; done
tail -12 "$work/sweep/job.log"
"$copy/perf_tests/gpu/variant_sweep.sh" collect /tmp/ablation-out > /dev/null
tar -czf "${OUT:-/tmp}/barrier-ablation.tar.gz" -C /tmp/ablation-out .
python3 "$repo/perf_tests/sweep_table.py" "$work/sweep" --order base,nb,nst,nrc,nte
