# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The fused forward's chain sweep as a table: us_flushed per forced chain (KSSIM_TUNE_FUSED_FORWARD_CHAIN).

    python3 perf_tests/chain_table.py DIR      # DIR: the chain_<n>.json files of perf_tests/gpu/extra.sh
"""
import glob
import json
import os
import re
import sys
from collections import defaultdict


def main():
    folder = sys.argv[1]
    times = defaultdict(dict)
    chains = []
    for path in sorted(glob.glob(os.path.join(folder, "chain_*.json"))):
        chain = int(re.search(r"chain_(\d+)\.json", path).group(1))
        chains.append(chain)
        for b in json.load(open(path))["benchmarks"]:
            m = re.match(r"ssim2d@fused/(fwd\+bwd|fwd)/float/(valid|same)/(\S+?)/", b["name"])
            if m:
                times[(m.group(1), m.group(3), m.group(2))][chain] = b["us_flushed"]
    chains.sort()
    print("| case | shape | padding | " + " | ".join(f"c = {c}" for c in chains) + " | best |")
    print("|---|---|---|" + "---:|" * (len(chains) + 1))
    for key in sorted(times):
        row = times[key]
        best = min(row, key=row.get)
        print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(f"{row.get(c, float('nan')):.1f}" for c in chains) +
              f" | {best} |")


if __name__ == "__main__":
    main()
