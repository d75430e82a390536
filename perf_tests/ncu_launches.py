#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The launches that perf_tests/gpu/ncu_launches.sh recorded, one line each:

    python3 perf_tests/ncu_launches.py OUT/launches_*.csv

time (us), grid, registers, shared memory per team (static + dynamic, KB), the teams per SM that registers,
shared memory and warps allow, the warps achieved (% of the SM's) and DRAM bytes, then the kernel's functor."""

import csv
import re
import sys

COLUMNS = [("gpu__time_duration.sum", "us", 1e-3), ("launch__grid_size", "grid", 1),
           ("launch__registers_per_thread", "regs", 1), ("launch__shared_mem_per_block_static", "smem_s", 1 / 1024),
           ("launch__shared_mem_per_block_dynamic", "smem_d", 1 / 1024),
           ("launch__occupancy_limit_registers", "lim_r", 1), ("launch__occupancy_limit_shared_mem", "lim_s", 1),
           ("launch__occupancy_limit_warps", "lim_w", 1), ("sm__warps_active.avg.pct_of_peak_sustained_active",
                                                          "warps%", 1), ("dram__bytes.sum", "MB", 1e-6)]


def functor(name):
    """The kssim functor of a Kokkos launch's demangled name, shortened."""
    m = re.search(r"ParallelFor<(.*?), (?:Kokkos::)?(?:Team|Range|MDRange)Policy", name)
    s = m.group(1) if m else name
    for noise in ("kssim::impl::", "Kokkos::", "(int)"):
        s = s.replace(noise, "")
    return s[:120]


def launches(path):
    """[(id, kernel name, {metric: value})] in launch order."""
    rows = [line for line in open(path) if line.startswith('"')]
    by_id = {}
    for r in csv.DictReader(rows):
        entry = by_id.setdefault(r["ID"], (r["Kernel Name"], {}))
        value = r["Metric Value"].replace(",", "")
        try:
            entry[1][r["Metric Name"]] = float(value)
        except ValueError:
            entry[1][r["Metric Name"]] = value
    return [(k, v[0], v[1]) for k, v in sorted(by_id.items(), key=lambda kv: int(kv[0]))]


def main():
    for path in sys.argv[1:]:
        print(path)
        print("  " + " ".join(f"{label:>7}" for _, label, _ in COLUMNS) + "  kernel")
        for _, name, m in launches(path):
            cells = []
            for metric, _, scale in COLUMNS:
                v = m.get(metric)
                cells.append(f"{v * scale:7.1f}" if isinstance(v, float) else f"{'-':>7}")
            print("  " + " ".join(cells) + "  " + functor(name))


if __name__ == "__main__":
    main()
