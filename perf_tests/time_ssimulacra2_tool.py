#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Wall time of `kssim ssimulacra2` against libjxl's `ssimulacra2` tool on the same machine, in one run.

Makes a 1920x1080 (or --size) reference from scikit-image's astronaut (bicubic upscale) and 10 JPEG-distorted
versions (qualities 20..83), as PNG, then times (median of --repeat runs, end to end: process start, PNG
decoding, computation, output):
  - one comparison: `ssimulacra2 ref d0` vs `kssim ssimulacra2 ref d0`;
  - ten comparisons with one reference: ten `ssimulacra2 ref dK` runs vs one `kssim ssimulacra2 ref d0 .. d9`.
Also checks that the scores agree. Run with OMP_NUM_THREADS set (e.g. 2).

  time_ssimulacra2_tool.py --kssim build/bin/kssim [--ssimulacra2 ssimulacra2] [--size 1920x1080] [--repeat 5]
                           [--perf build/bin/kssim_perf_ssimulacra2]
"""
import argparse
import io
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
from PIL import Image
import skimage.data


def timed(cmd, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t0)
        out = r.stdout
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kssim", required=True)
    ap.add_argument("--ssimulacra2", default="ssimulacra2")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--perf", help="also run this kssim_perf_ssimulacra2 (library only, no PNG decoding) at --size")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        ref = Image.fromarray(skimage.data.astronaut()).resize((w, h), Image.BICUBIC)
        ref_path = os.path.join(tmp, "ref.png")
        ref.save(ref_path)
        dists = []
        for k in range(10):
            buf = io.BytesIO()
            ref.save(buf, format="JPEG", quality=20 + 7 * k)
            p = os.path.join(tmp, f"d{k}.png")
            Image.open(io.BytesIO(buf.getvalue())).convert("RGB").save(p)
            dists.append(p)
        t_tool1, s_tool = timed([a.ssimulacra2, ref_path, dists[0]], a.repeat)
        t_ks1, s_ks = timed([a.kssim, "ssimulacra2", ref_path, dists[0]], a.repeat)
        t_tool10 = 0.0
        tool_scores = []
        for p in dists:
            t, s = timed([a.ssimulacra2, ref_path, p], a.repeat)
            t_tool10 += t
            tool_scores.append(float(s))
        t_ks10, s10 = timed([a.kssim, "ssimulacra2", ref_path] + dists, a.repeat)
        ks_scores = [float(v) for v in s10.split()]
        diff = max(abs(x - y) for x, y in zip(tool_scores, ks_scores))
        print(f"{w}x{h}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, median of {a.repeat}:")
        print(f"  1 comparison:   ssimulacra2 {1e3 * t_tool1:8.1f} ms   kssim {1e3 * t_ks1:8.1f} ms   "
              f"speed-up {t_tool1 / t_ks1:.2f}x")
        print(f"  10 comparisons: ssimulacra2 {1e3 * t_tool10:8.1f} ms   kssim {1e3 * t_ks10:8.1f} ms   "
              f"speed-up {t_tool10 / t_ks10:.2f}x  (kssim: one process, reference computed once)")
        print(f"  max |score difference| over the 10 pairs: {diff:.2e}")
        if a.perf:
            r = subprocess.run([a.perf, "--size", a.size, "--batch", "10", "--repeat", str(a.repeat)],
                               capture_output=True, text=True, check=True)
            print("  library (kssim_perf_ssimulacra2):")
            for line in r.stdout.splitlines():
                print("    " + line)


if __name__ == "__main__":
    main()
