#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Per-pixel counts of the SSIM kernels from Nsight Compute CSV files (perf_tests/gpu/ncu_counts.sh):

  python3 perf_tests/ncu_table.py OUT/ncu_kssim_*.csv OUT/ncu_fused_ssim.csv [--pixels 6220800]

One line per profiled kernel launch: ncu's duration, then thread instructions per output pixel
(smsp__inst_executed x 32 / pixels), FFMA, FADD, FMUL (thread instructions), shared loads and stores
(instructions x 32), IPC, registers and DRAM bytes per pixel. --pixels: the image's pixels (default
1x3x1080x1920, the shape ncu_counts.sh profiles).
"""
import argparse
import csv
import io


def launches(path):
    lines = [line for line in open(path, errors="replace").read().splitlines() if line.startswith('"')]
    result = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        name = row["Kernel Name"]
        for key in ("FusedForward", "FusedBackward", "fusedssim_backward", "fusedssimCUDA"):
            if key in name:
                break
        else:
            key = name[:40]
        result.setdefault((row["ID"], key), {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("files", nargs="+")
    p.add_argument("--pixels", type=float, default=1080 * 1920 * 3)
    a = p.parse_args()
    px = a.pixels
    print(f"{'file':28s} {'kernel':18s} {'us':>7s} {'inst':>6s} {'ffma':>6s} {'fadd':>5s} {'fmul':>5s} "
          f"{'lds':>5s} {'sts':>5s} {'ipc':>5s} {'regs':>4s} {'dramB':>6s}")
    for f in a.files:
        for (_, kernel), m in launches(f).items():
            op = "sm__sass_thread_inst_executed_op_"
            print(f"{f.split('/')[-1][:28]:28s} {kernel:18s} {m['gpu__time_duration.sum'] / 1e3:7.1f} "
                  f"{m['smsp__inst_executed.sum'] * 32 / px:6.1f} {m[op + 'ffma_pred_on.sum'] / px:6.1f} "
                  f"{m[op + 'fadd_pred_on.sum'] / px:5.1f} {m[op + 'fmul_pred_on.sum'] / px:5.1f} "
                  f"{m['smsp__sass_inst_executed_op_shared_ld.sum'] * 32 / px:5.1f} "
                  f"{m['smsp__sass_inst_executed_op_shared_st.sum'] * 32 / px:5.1f} "
                  f"{m['sm__inst_executed.avg.per_cycle_active']:5.2f} {m['launch__registers_per_thread']:4.0f} "
                  f"{m['dram__bytes.sum'] / px:6.1f}")


if __name__ == "__main__":
    main()
