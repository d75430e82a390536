#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Warp-stall reasons of one GPU kernel from Nsight Compute's per-SASS-instruction export (the
ncu_sass_*.csv files of perf_tests/gpu/ncu_counts.sh, plain or gzipped): the share of every stall reason
over the kernel, then the basic blocks (runs of instructions executed equally often) that drew the most
samples, with their top reasons. Tells whether an instruction-bound kernel waits on barriers, on global
loads (long_sb), on the shared-memory pipe (mio) or on issue itself (not_selected, selected).

  python3 perf_tests/ncu_stalls.py OUT/ncu_sass_forward.csv.gz [--blocks 12]

With --pixels P (the outputs the profiled launch computed, e.g. 3*1070*1910 for 1x3x1080x1920 valid) it also
lists the blocks that issue the most: thread instructions per output pixel (warp instructions x 32 / P) and
their opcode mix, i.e. where the instructions per pixel of perf_tests/README.md ("Where the time goes") go.
"""
import argparse
import collections
import csv
import gzip


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--pixels", type=int, default=0)
    args = p.parse_args()
    opener = gzip.open if args.csv.endswith(".gz") else open
    with opener(args.csv, "rt", errors="replace") as f:
        rows = list(csv.reader(f))
    hdr = next(i for i, r in enumerate(rows) if "Source" in r)
    h = rows[hdr]
    reasons = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
    col = {c: h.index(c) for c in reasons}
    executed = h.index("Instructions Executed")
    source = h.index("Source")
    total = collections.Counter()
    blocks = []
    for r in rows[hdr + 1:]:
        if len(r) < len(h):
            continue
        try:
            n = float(r[executed])
        except ValueError:
            continue
        samples = collections.Counter({c: float(r[col[c]] or 0) for c in reasons})
        total.update(samples)
        words = [w for w in r[source].split() if not w.startswith("@")]  # drop a predicate guard
        opcode = words[0].split(".")[0] if words else "?"
        if blocks and blocks[-1]["n"] == n:
            blocks[-1]["len"] += 1
            blocks[-1]["samples"].update(samples)
            blocks[-1]["ops"][opcode] += 1
        else:
            blocks.append(dict(first=len(blocks) and blocks[-1]["first"] + blocks[-1]["len"], n=n, len=1,
                               samples=samples, ops=collections.Counter({opcode: 1})))
    all_samples = sum(total.values())
    print(f"{int(all_samples)} warp-stall samples")
    for c, v in total.most_common():
        if v:
            print(f"  {c[6:]:20s} {100 * v / all_samples:5.1f}%")
    print(f"\nblocks with the most samples (first instruction, length, executions):")
    for b in sorted(blocks, key=lambda b: -sum(b["samples"].values()))[:args.blocks]:
        s = sum(b["samples"].values())
        top = ", ".join(f"{k[6:]} {100 * v / all_samples:.1f}%" for k, v in b["samples"].most_common(3))
        print(f"  @{b['first']:5d} {b['len']:4d} instr x {int(b['n']):8d}: {100 * s / all_samples:5.1f}%  ({top})")
    if args.pixels:
        per_pixel = lambda b: b["n"] * b["len"] * 32 / args.pixels
        print(f"\n{sum(map(per_pixel, blocks)):.1f} thread instructions per pixel; the blocks that issue the most:")
        for b in sorted(blocks, key=lambda b: -per_pixel(b))[:args.blocks]:
            mix = " ".join(f"{k} {v}" for k, v in b["ops"].most_common(8))
            print(f"  @{b['first']:5d} {b['len']:4d} instr x {int(b['n']):8d}: {per_pixel(b):6.1f} per pixel  ({mix})")


if __name__ == "__main__":
    main()
