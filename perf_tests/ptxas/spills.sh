#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Registers and spills of the fused SSIM kernels on sm_90, from ptxas -v, without a GPU (about 80 s on 2 cores):
#
#   perf_tests/ptxas/spills.sh [-DKSSIM_TUNE_...=... ...]
#
# Compiles fused_kernels.cpp with the host's nvcc against the CUDA Kokkos configuration that
# `cmake/compile-check cuda-sm90` generates (run that first; same KSSIM_COMPILE_CHECK_DIR), and prints one line
# per fused kernel instance: taps, template arguments, registers, spill stores / loads (bytes). Spills are
# static counts, not executions, but a change that adds them to a kernel held at 48 registers by its launch
# bound has cost time on the H200 (perf_tests/README.md, "Kernel variants").
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cc=${KSSIM_COMPILE_CHECK_DIR:-$repo/build/compile-check}/cuda-sm90/include
root=${KSSIM_SID_ROOT:-/var/cache/kssim/sid-root}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -f "$cc/KokkosCore_config.h" ] || { echo "spills.sh: no CUDA Kokkos configuration in $cc: run cmake/compile-check cuda-sm90 first" >&2; exit 2; }
host_cxx=$(command -v g++-12 || command -v g++)
log=$(mktemp); obj=$(mktemp --suffix=.o)
trap 'rm -f "$log" "$obj"' EXIT
"$nvcc" -x cu -std=c++20 -arch=sm_90 -ccbin "$host_cxx" --extended-lambda -O3 -Xptxas -v -I"$cc" \
  -I"$root/usr/include/kokkos" -I"$repo/include" "$@" -c "$repo/perf_tests/ptxas/fused_kernels.cpp" -o "$obj" > "$log" 2>&1 ||
  { tail -20 "$log"; exit 1; }
python3 - "$log" <<'PY'
import re, subprocess, sys
lines = open(sys.argv[1]).read().split('\n')
name = None
for i, line in enumerate(lines):
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        name = m.group(1)
        continue
    if name and 'Used' in line and 'registers' in line:
        if ('FusedForward' in name or 'FusedBackward' in name or 'FusedNormalized' in name) and 'WorkItemProperty' not in name:
            d = subprocess.run(['c++filt', name], capture_output=True, text=True).stdout
            k = re.search(r"kssim::impl::(Fused\w+)<Kokkos::Cuda, (.*?)> >", d)
            taps = re.search(r"FixedTaps<(\d+)", d)
            spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", lines[i - 1])
            regs = re.search(r"Used (\d+) registers", line)
            if k and taps and spill:
                run = re.search(r"FusedForwardRun<.*, false, (true|false)>", d)  # MapOnly, SliceStatistics
                kind = k.group(1)[5:] + ((" slices" if run.group(1) == "true" else " map only") if run else "")
                print(f"{kind:17s} taps {taps.group(1):>2s}  {re.sub(r'>, (true|false), (true|false)$', '', k.group(2)).replace('kssim::impl::', '')[:48]:48s}"
                      f" regs {regs.group(1)}  spills {spill.group(1)}/{spill.group(2)}")
        name = None
PY
