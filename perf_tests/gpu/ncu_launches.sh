#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Every kssim kernel of a few steps of some benchmarks, with what sets its occupancy: time, grid, registers,
# static and dynamic shared memory per team, the occupancy limits (teams per SM allowed by registers, shared
# memory, warps) and the warps achieved. For "why is this step slower than that one" before reading SASS.
#
#   perf_tests/gpu/ncu_launches.sh BIN OUT FILTER...    (BIN: kssim's build bin/ with kssim_perf_tests)
#
# One OUT/launches_<i>.csv per FILTER (a kssim_perf_tests --benchmark_filter naming one benchmark); the launches
# past the first 40 (the first-use self-check's), 12 of them. perf_tests/ncu_launches.py prints them as a table.
set -uo pipefail
bin=${1:?kssim build bin/} out=${2:?output folder}
shift 2
mkdir -p "$out"
metrics=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
metrics+=,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
metrics+=,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum
i=0
for filter in "$@"; do
  timeout 150 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:kssim --launch-skip 40 \
    --launch-count 12 --csv --metrics "$metrics" "$bin/kssim_perf_tests" --benchmark_filter="$filter" \
    --benchmark_min_time=30x > "$out/launches_$i.csv" 2> "$out/launches_$i.log"
  i=$((i + 1))
done
