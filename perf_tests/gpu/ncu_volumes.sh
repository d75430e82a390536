#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Where a volume's time goes: Nsight Compute's duration and DRAM bytes of every kssim kernel of a few
# 1x1x256x256x256 float fwd+bwd steps (valid padding, the router's slice-fused schedule), past the first-use
# self-check's launches. Issue 27's 256^3 ratio (0.305x fused_ssim3d) needs to know which of the slice kernels
# and the depth passes takes the time before a kernel is written for it.
#   perf_tests/gpu/ncu_volumes.sh BIN OUT     (BIN: kssim's build bin/ with kssim_perf_tests; OUT: a folder)
# writes OUT/ncu_volumes_256.csv (one row per kernel launch and metric) and its log.
set -uo pipefail
bin=${1:?kssim build bin/} out=${2:?output folder}
mkdir -p "$out"
timeout 150 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:kssim --launch-skip 40 \
  --launch-count 24 --csv --metrics gpu__time_duration.sum,dram__bytes.sum,launch__grid_size,launch__block_size \
  "$bin/kssim_perf_tests" --benchmark_filter='^ssim3d/fwd\+bwd/float/valid/1x1x256x256x256/Cuda/' \
  --benchmark_min_time=12x > "$out/ncu_volumes_256.csv" 2> "$out/ncu_volumes_256.log"
rc=$?
echo "ncu_volumes: exit $rc"
exit $rc
