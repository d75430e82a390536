#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The plot of perf_tests/README.md, "GPU against fused-ssim": time against size, valid padding, float32, forward
and forward + backward, 2D and 3D shapes, kssim's C++ time (kssim_perf_tests counter us_flushed, the exact window,
families ssim2d and ssim3d) against fused-ssim's through PyTorch (triton's do_bench median, fused_ssim and
fused_ssim3d), both with the L2 flushed. Its inputs are one GPU run's bench-cpp.json and bench-torch.json
(perf_tests/gpu/run); the same run's tables come from perf_tests/make_torch_table.py.

  cmake/dev-env python3 perf_tests/make_comparison.py OUT/bench-cpp.json OUT/bench-torch.json \\
      [--out perf_tests/results/gpu-cpp-vs-fused-ssim.png]

Needs matplotlib (the cmake/dev-env root has it).
"""
import argparse
import json
import pathlib

here = pathlib.Path(__file__).resolve().parent


def pixels(shape):
    n = 1
    for d in shape.split("x"):
        n *= int(d)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cpp_json")
    ap.add_argument("torch_json")
    ap.add_argument("--out", default=str(here / "results" / "gpu-cpp-vs-fused-ssim.png"))
    args = ap.parse_args()

    kssim = {}
    for b in json.load(open(args.cpp_json))["benchmarks"]:
        parts = b["name"].split("/")  # family/mode/dtype/padding/shape/Space/manual_time
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred") or "us_flushed" not in b:
            continue
        if parts[0] in ("ssim2d", "ssim3d") and parts[2] == "float" and parts[5] in ("Cuda", "HIP"):
            kssim[(parts[1], parts[3], parts[4])] = float(b["us_flushed"])
    torch = json.load(open(args.torch_json))
    rows = []  # (mode, shape, kssim us, fused-ssim us), valid padding
    for r in torch["results"]:
        key = (r["mode"], r["padding"], r["shape"])
        peer = r.get("fused_ssim_do_bench_us")
        if r["dtype"] == "float" and r["padding"] == "valid" and key in kssim and peer:
            rows.append((r["mode"], r["shape"], kssim[key], peer))
    for row in rows:
        print("%-8s %-18s kssim %8.1f us  fused-ssim %8.1f us  ratio %.3f" % (*row, row[2] / row[3]))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    device = torch.get("context", {}).get("device", "GPU")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, mode in zip(axes, ("fwd+bwd", "fwd")):
        for dims, style in ((2, "-"), (3, ":")):
            sel = sorted((r for r in rows if r[0] == mode and r[1].count("x") == dims + 1), key=lambda r: pixels(r[1]))
            px = [pixels(r[1]) / 1e6 for r in sel]
            ax.loglog(px, [r[2] for r in sel], "o" + style, color="C0", label=f"kssim {dims}D (C++)")
            ax.loglog(px, [r[3] for r in sel], "s" + style, color="C1", label=f"fused-ssim {dims}D")
            for x, r in zip(px, sel):
                ax.annotate(r[1], (x, r[2]), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_title(f"{device}, float32, valid, {mode}, L2 flushed")
        ax.set_xlabel("pixels or voxels (millions)")
        ax.set_ylabel("time (us)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
