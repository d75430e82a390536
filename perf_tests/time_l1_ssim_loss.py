#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Time the 3D Gaussian Splatting training loss on CUDA, fwd+bwd, float32, same padding, in one process:

  kssim_fused       kssim.l1_ssim_loss(x, y)                                    (L1 inside the SSIM kernels)
  kssim_ssim        kssim.fused_ssim(x, y)                                      (SSIM alone)
  kssim_separate    0.8 * (x - y).abs().mean() + 0.2 * (1 - kssim.fused_ssim(x, y))
  fused_ssim_ssim   fused_ssim.fused_ssim(x, y)                                 (when fused-ssim imports)
  fused_ssim_separate  0.8 * (x - y).abs().mean() + 0.2 * (1 - fused_ssim.fused_ssim(x, y))

each followed by .backward() (gradient of x only, as a render's), on the 2D shapes of kssim_perf_tests.
Timing as perf_tests/time_fused_ssim.py (whose helpers it uses): CUDA events around each step, the median
of --iters after --warmup, once as is and once with the L2 cache flushed before every step (<impl>_us,
<impl>_flushed_us). x.grad is reset outside the timed region.

  python3 perf_tests/time_l1_ssim_loss.py --json l1.json [--kssim-json kssim_perf_tests.json]

With --kssim-json (kssim_perf_tests --benchmark_out), the C++ l1ssim2d and l1ssim2d@separate times are
printed beside.
"""

import argparse
import importlib
import json

import torch

from time_fused_ssim import SHAPES_2D, shape_name, time_case

L1_WEIGHT = 0.8


def variants(modules):
    kssim = modules["kssim"]
    out = {
        "kssim_fused": lambda x, y: kssim.l1_ssim_loss(x, y, l1_weight=L1_WEIGHT),
        "kssim_ssim": lambda x, y: kssim.fused_ssim(x, y),
        "kssim_separate": lambda x, y: L1_WEIGHT * (x - y).abs().mean() + (1 - L1_WEIGHT) * (1 - kssim.fused_ssim(x, y)),
    }
    fs = modules.get("fused_ssim")
    if fs is not None:
        out["fused_ssim_ssim"] = lambda x, y: fs.fused_ssim(x, y)
        out["fused_ssim_separate"] = lambda x, y: (L1_WEIGHT * (x - y).abs().mean()
                                                   + (1 - L1_WEIGHT) * (1 - fs.fused_ssim(x, y)))
    return out


def cpp_times(path, shape):
    try:
        with open(path) as f:
            results = json.load(f)
    except (TypeError, OSError, ValueError):  # no --kssim-json, or its file missing or cut short
        return {}
    found = {}
    for family in ("l1ssim2d", "l1ssim2d@separate", "ssim2d"):
        prefix = f"{family}/fwd+bwd/float/same/{shape_name(shape)}/"
        for b in results.get("benchmarks", []):
            name = b.get("name", "")
            if name.startswith(prefix) and name[len(prefix):].split("/")[0] in ("Cuda", "HIP") and not b.get("error_occurred"):
                found[family] = float(b.get("us_b2b", b["us"]))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--kssim-json", help="kssim_perf_tests JSON with the l1ssim2d cases")
    args = p.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA device"
    modules = {"kssim": importlib.import_module("kssim")}
    try:
        modules["fused_ssim"] = importlib.import_module("fused_ssim")
    except ImportError:
        print("fused_ssim does not import: timing kssim only")
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(20261201)
    flush = torch.empty(64 << 20, dtype=torch.float32, device=dev)  # 256 MB: more than the H200's 60 MB L2
    rows = []
    for shape in SHAPES_2D:
        x = torch.rand(shape, device=dev, generator=gen, dtype=torch.float32).requires_grad_(True)
        y = torch.rand(shape, device=dev, generator=gen, dtype=torch.float32)
        row = dict(shape=shape_name(shape), padding="same", dtype="float", mode="fwd+bwd")
        for name, loss in variants(modules).items():
            def step():
                loss(x, y).backward()

            def reset():
                x.grad = None

            def reset_and_flush():
                x.grad = None
                flush.zero_()

            median, best = time_case(step, reset, args.warmup, args.iters)
            flushed, _ = time_case(step, reset_and_flush, args.warmup, args.iters)
            row.update({f"{name}_us": median, f"{name}_min_us": best, f"{name}_flushed_us": flushed,
                        f"{name}_value": float(loss(x, y).detach())})
            print(f"{name:20s} {shape_name(shape):16s} median {median:9.1f} us  min {best:9.1f} us  "
                  f"flushed {flushed:9.1f} us", flush=True)
        row.update({f"cpp_{k}_us": v for k, v in cpp_times(args.kssim_json, shape).items()})
        rows.append(row)
        del x, y
        torch.cuda.empty_cache()

    print("\nfwd+bwd, float32, same padding; ratio = time / kssim_fused time (back to back, then L2 flushed)")
    names = [k[:-3] for k in rows[0] if k.endswith("_us") and not k.endswith(("_min_us", "_flushed_us"))
             and not k.startswith("cpp_")]
    for suffix in ("_us", "_flushed_us"):
        print(f"{'shape':16s}" + "".join(f" {n + suffix:>28s} {'ratio':>6s}" for n in names))
        for r in rows:
            base = r[f"kssim_fused{suffix}"]
            print(f"{r['shape']:16s}" + "".join(f" {r[n + suffix]:28.1f} {r[n + suffix] / base:6.3f}" for n in names))
    if args.json:
        meta = dict(torch=torch.__version__, cuda=torch.version.cuda, device=torch.cuda.get_device_name(),
                    kssim=modules["kssim"].__version__, kssim_build=modules["kssim"].build_info(),
                    warmup=args.warmup, iters=args.iters, l1_weight=L1_WEIGHT)
        with open(args.json, "w") as f:
            json.dump(dict(context=meta, results=rows), f, indent=1)


if __name__ == "__main__":
    main()
