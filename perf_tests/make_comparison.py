#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Joins a kssim_perf_tests JSON and a time_fused_ssim.py JSON from the same device run into
results/h200-vs-fused-ssim.csv (case, padding, shape, kssim_us, fused_ssim_us, ratio = kssim / fused-ssim;
float32, both paddings, gradient of image 1 for fwd+bwd; with the L2 cache flushed before every run:
kssim_flushed_us, fused_ssim_flushed_us, flushed_ratio) and, if matplotlib is available, a plot of time
versus size (valid padding). kssim_us is kssim's back-to-back time per call (us_b2b) where the JSON has it.

  python3 perf_tests/make_comparison.py perf_tests/results/h200-kssim.json perf_tests/results/h200-fused-ssim.json
"""
import csv
import json
import pathlib
import sys

here = pathlib.Path(__file__).resolve().parent
kssim_json, fused_json = sys.argv[1], sys.argv[2]
kssim = {}
for b in json.load(open(kssim_json))["benchmarks"]:
    parts = b["name"].split("/")  # family/mode/dtype/padding/shape/Space/manual_time
    if b.get("run_type", "iteration") != "iteration" or parts[5] not in ("Cuda", "HIP"):
        continue
    kssim[(parts[0], parts[1], parts[2], parts[3], parts[4])] = (b.get("us_b2b", b.get("us", b["real_time"])),
                                                                b.get("us_flushed"))
rows = []
for r in json.load(open(fused_json))["results"]:
    if r["dtype"] != "float":
        continue
    key = (r["family"], r["mode"], r["dtype"], r["padding"], r["shape"])
    if key in kssim:
        rows.append((r["mode"], r["padding"], r["shape"], kssim[key][0], r["fused_ssim_us"], kssim[key][1],
                     r.get("fused_ssim_flushed_us")))
out = here / "results" / "h200-vs-fused-ssim.csv"
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["case", "padding", "shape", "kssim_us", "fused_ssim_us", "ratio", "kssim_flushed_us",
                "fused_ssim_flushed_us", "flushed_ratio"])
    for case, padding, shape, k, fs, kf, ff in rows:
        flushed = [f"{kf:.1f}", f"{ff:.1f}", f"{kf / ff:.3f}"] if kf and ff else ["", "", ""]
        w.writerow([case, padding, shape, f"{k:.1f}", f"{fs:.1f}", f"{k / fs:.3f}"] + flushed)
rows = [(case, shape, k, fs) for case, padding, shape, k, fs, _, _ in rows if padding == "valid"]  # the plot
print(open(out).read())
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for ax, case in zip(axes, ("fwd+bwd", "fwd")):
    for dims, style in ((2, "-"), (3, ":")):
        sel = sorted((r for r in rows if r[0] == case and r[1].count("x") == dims + 1),
                     key=lambda r: eval(r[1].replace("x", "*")))
        px = [eval(r[1].replace("x", "*")) / 1e6 for r in sel]
        ax.loglog(px, [r[2] for r in sel], "o" + style, color="C0", label=f"kssim {dims}D (Kokkos CUDA)")
        ax.loglog(px, [r[3] for r in sel], "s" + style, color="C1", label=f"fused-ssim {dims}D")
    sel = [r for r in rows if r[0] == case]
    px = [eval(r[1].replace("x", "*")) / 1e6 for r in sel]
    for x, r in zip(px, sel):
        ax.annotate(r[1], (x, r[2]), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_title(f"H200, float32, valid, {case}")
    ax.set_xlabel("pixels or voxels (millions)")
    ax.set_ylabel("time (us)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
fig.tight_layout()
fig.savefig(here / "results" / "h200-vs-fused-ssim.png", dpi=110)
