#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Strong and weak scaling of `kssim compare --decompose` (kssim::mpi) on a 3D field, with the halo
exchange's share of the time.

For each rank count P it times (the median of --repeat runs, as the tool reports it; with MPI the slowest
rank's time per run):
  strong   the field D x H x W split P x 1 x 1 over P ranks
  weak     a field of P*D x H x W split P x 1 x 1 over P ranks (each rank holds D x H x W)
  local    P independent single-process runs side by side (mpirun without --decompose, the slowest
           reported) on rank 0's extended block of the strong split (its block and the halo of window // 2
           cells on each split side): the same arithmetic and the same competition for the cores, without
           any exchange or reduction, so (strong - local) / strong is the share of the exchanges, the copies
           into the extended block, the reduction and the waiting for the slowest rank
and "single", the single-process tool on the whole field (no kssim::mpi at all). The tool also reports the
time spent inside the halo exchanges themselves (packing, staging, MPI, unpacking, the gradient sums).

Every run computes the mean and both gradients (--grad-a, --grad-b; written once, after the timed runs).

usage: mpi_scaling.py --kssim build/default/bin/kssim --mpirun "mpirun --oversubscribe" --ranks 1 2
                      --size 160 160 160 [--threads-total 2] [--padding valid] [--json out.json]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kssim", required=True)
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    p.add_argument("--size", type=int, nargs=3, default=[160, 160, 160])
    p.add_argument("--threads-total", type=int, default=0, help="OMP_NUM_THREADS x ranks (host backends); 0: leave")
    p.add_argument("--padding", default="valid")
    p.add_argument("--window", type=int, default=11)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--tmp", default=None, help="folder for the fields (large: 2 x 4 bytes per voxel per size)")
    p.add_argument("--json", default=None)
    a = p.parse_args()

    tmp = tempfile.mkdtemp(dir=a.tmp)
    rng = np.random.default_rng(1)
    fields = {}

    def field(d, h, w):
        key = (d, h, w)
        if key not in fields:
            x = rng.random((d, h, w), dtype=np.float32).astype(a.dtype)
            y = np.clip(x + 0.05 * rng.standard_normal((d, h, w), dtype=np.float32), 0, 1).astype(a.dtype)
            pa, pb = os.path.join(tmp, f"a_{d}_{h}_{w}.npy"), os.path.join(tmp, f"b_{d}_{h}_{w}.npy")
            np.save(pa, x)
            np.save(pb, y)
            del x, y
            fields[key] = (pa, pb)
        return fields[key]

    def run(ranks, dims, decompose, threads, padding=None):
        pa, pb = field(*dims)
        env = dict(os.environ)
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        args = [a.kssim, "compare", pa, pb, "--dims", "3", "--padding", padding or a.padding, "--window", str(a.window),
                "--repeat", str(a.repeat), "--json", "--grad-a", os.path.join(tmp, "ga.npy"),
                "--grad-b", os.path.join(tmp, "gb.npy")]
        if decompose:
            args += ["--decompose", decompose]
        if decompose or ranks > 1:  # without --decompose: `ranks` independent copies side by side
            args = shlex.split(a.mpirun) + ["-np", str(ranks)] + args
        r = subprocess.run(args, capture_output=True, text=True, env=env)
        if r.returncode:
            sys.exit(f"failed ({r.returncode}): {' '.join(args)}\n{r.stderr}")
        js = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
        slowest = max(js, key=lambda j: j["timing"]["median_s"])
        return slowest["timing"]["median_s"], slowest["ssim"], slowest["timing"].get("exchange_median_s", 0.0)

    d, h, w = a.size
    halo = a.window // 2
    rows = []
    per_rank = lambda ranks: max(1, a.threads_total // ranks) if a.threads_total else 0
    single, ssim_single, _ = run(1, (d, h, w), None, per_rank(1))
    rows.append({"case": "single", "ranks": 1, "field": [d, h, w], "median_s": single, "ssim": ssim_single})
    print(f"single process {d}x{h}x{w}: {single:.4f} s")
    for ranks in a.ranks:
        strong, s1, x1 = run(ranks, (d, h, w), f"{ranks}x1x1", per_rank(ranks))
        weak, s2, x2 = run(ranks, (ranks * d, h, w), f"{ranks}x1x1", per_rank(ranks))
        # Rank 0's extended block of the strong split, computed as the rank does: valid padding on its block
        # and the halo after it (same padding: and the halo of zeros before it).
        first = d // ranks + (1 if d % ranks else 0)
        same = a.padding == "same"
        ext = (first + halo + (halo if same else 0), h + (2 * halo if same else 0), w + (2 * halo if same else 0))
        local, _, _ = run(ranks, ext, None, per_rank(ranks), "valid") if ranks > 1 else (single, 0, 0)
        share = max(0.0, (strong - local) / strong) if ranks > 1 else 0.0
        rows.append({"case": "strong", "ranks": ranks, "field": [d, h, w], "median_s": strong, "ssim": s1,
                     "speedup_vs_single": single / strong, "local_block": list(ext), "local_median_s": local,
                     "exchange_share": share, "exchange_s": x1})
        rows.append({"case": "weak", "ranks": ranks, "field": [ranks * d, h, w], "median_s": weak, "ssim": s2,
                     "efficiency_vs_single": single / weak, "exchange_s": x2})
        print(f"{ranks} ranks: strong {strong:.4f} s (x{single / strong:.2f} vs single; exchanges {x1:.4f} s = "
              f"{100 * x1 / strong:.0f}%; local block {'x'.join(map(str, ext))} side by side {local:.4f} s, so exchanges "
              f"and waiting {100 * share:.0f}%), weak {ranks * d}x{h}x{w} {weak:.4f} s (efficiency "
              f"{single / weak:.2f}; exchanges {100 * x2 / weak:.0f}%); |SSIM - single| {abs(s1 - ssim_single):.1e}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "rows": rows}, f, indent=1)
    for k in fields.values():
        for path in k:
            os.remove(path)


if __name__ == "__main__":
    main()
