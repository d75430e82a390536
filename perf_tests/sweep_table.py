#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Medians of perf_tests/gpu/variant_sweep.sh's runs: one row per case (metric, shape, padding, fwd or fwd+bwd),
one column per variant (the medians of its rounds, us), and each variant's ratio to the first one named (the
stage schedule's lines, where the sweep timed them, under <shape>@stages). With `masked` or `l1` sweeps, the
metrics other than SSIM also get their time over SSIM's (the first variant's, same case), and a case whose
printed value or gradient norm differs between variants is marked.

    python3 perf_tests/sweep_table.py OUT/sweep [--order main,old,...]
"""
import argparse
import pathlib
import re
import statistics
import sys

LINE = re.compile(r"^(\d+(?:x\d+){3,4})(?: ([a-z][\w-]*))?\s+(\w+)\s+(\w+)\s+(fwd\+bwd|fwd)\s+([\d.]+) us(.*)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--order", help="variants in this order (the first is the reference)")
    a = ap.parse_args()
    times = {}  # variant -> case -> [us]
    values = {}  # case -> variant -> {printed value and gradient norm}
    for f in sorted(pathlib.Path(a.folder).glob("*_[0-9]*.txt")):
        variant = f.stem.rsplit("_", 1)[0]
        for line in f.read_text().splitlines():
            m = LINE.match(line)
            if m:
                shape = m.group(1) if m.group(4) == "fused" else f"{m.group(1)}@{m.group(4)}"  # images, volumes
                case = (m.group(2) or "ssim", m.group(5), m.group(3), shape)
                times.setdefault(variant, {}).setdefault(case, []).append(float(m.group(6)))
                values.setdefault(case, {}).setdefault(variant, set()).add(m.group(7).strip())
    if not times:
        sys.exit("no sweep output in " + a.folder)
    names = a.order.split(",") if a.order else sorted(times)
    ref = names[0]
    cases = sorted(times[ref])
    metrics = any(c[0] != "ssim" for c in cases)
    head = ["metric", "case", "padding", "shape"] + [f"{n} us" for n in names] + [f"{n}/{ref}" for n in names[1:]]
    head += [f"{ref}/ssim", "values"] if metrics else []
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for c in cases:
        med = [statistics.median(times[n].get(c, [float("nan")])) for n in names]
        cells = list(c) + [f"{m:.1f}" for m in med] + [f"{m / med[0]:.3f}" for m in med[1:]]
        if metrics:
            ssim = times[ref].get(("ssim",) + c[1:])
            cells.append(f"{med[0] / statistics.median(ssim):.3f}" if ssim else "")
            same = len({frozenset(v) for v in values[c].values()}) == 1
            cells.append("same" if same else "differ")
        print("| " + " | ".join(cells) + " |")
    rounds = {n: max(len(v) for v in times[n].values()) for n in names}
    print(f"\nrounds per variant: {rounds}")


if __name__ == "__main__":
    main()
