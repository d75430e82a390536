#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A device check of sweep variants' results (variant_sweep.sh builds their binaries): runs each named variant's
# schedule_sweep once with no arguments (every schedule, both paddings, the five image shapes; the variant's
# environment words as in KSSIM_GPU_SWEEP_VARIANT, e.g. "ab4:KSSIM_TUNE_FUSED_BACKWARD_CHAIN=4") into
# WORK/sweep/check_<name>.txt, then prints, per variant, the largest difference between the fused and the stage
# schedule's printed SSIM and gradient norm over the cases (the stage schedule never uses the fused kernels'
# tuning switches, so a fused variant that computes something else shows here). More than 2e-6 in SSIM (printed
# to 6 decimals) or 1e-5 relative in the gradient norm, or no case at all, prints MISMATCH and exits 1.
# variant_sweep.sh collect takes the files along.
#
#   perf_tests/gpu/sweep_check.sh async "ab4:KSSIM_TUNE_FUSED_BACKWARD_CHAIN=4"
set -uo pipefail
work=${KSSIM_GPU_WORK:-/tmp/kssim-gpu}
out=$work/sweep
lib=$(ls -d "$work"/kokkos-4.6.01/lib64 "$work"/kokkos-4.6.01/lib 2>/dev/null | head -1)
status=0
for spec in "$@"; do
  name=${spec%%:*}
  envs=; [ "$spec" != "$name" ] && envs=${spec#*:}
  [ -x "$out/sweep_$name" ] || { echo "sweep_check: no binary $out/sweep_$name"; status=1; continue; }
  # shellcheck disable=SC2086
  ( exec 9> "$work/gpu.lock"; flock 9
    env LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}" $envs "$out/sweep_$name" > "$out/check_$name.txt" 2>&1 ) ||
    { echo "sweep_check: $name failed (exit $?)"; status=1; continue; }
  awk -v name="$name" '
    $3 == "stages" || $3 == "fused" {
      key = $1 " " $2 " " $4; ssim[key, $3] = $8; grad[key, $3] = $10; keys[key] = 1 }
    END {
      ds = 0; dg = 0; n = 0
      for (k in keys) {
        if (!((k, "stages") in ssim) || !((k, "fused") in ssim)) continue
        n++
        d = ssim[k, "fused"] - ssim[k, "stages"]; if (d < 0) d = -d; if (d > ds) ds = d
        if (grad[k, "stages"] != 0) { d = grad[k, "fused"] / grad[k, "stages"] - 1; if (d < 0) d = -d; if (d > dg) dg = d }
      }
      bad = n == 0 || ds > 2e-6 || dg > 1e-5
      printf "%s: %d cases, fused against stages: largest SSIM difference %.1e, gradient norm %.1e (relative)%s\n",
             name, n, ds, dg, bad ? ": MISMATCH" : ""
      exit bad
    }' "$out/check_$name.txt" || status=1
done
exit $status
