#!/usr/bin/env python3
"""Time fused-ssim (https://github.com/rahul-goel/fused-ssim) on the shapes of kssim_perf_tests.

Needs an installed fused_ssim package (this script builds nothing) and a CUDA device. For each shape,
float32, padding "valid" and "same":
  fwd      fused_ssim(img1, img2, padding, train=False) under torch.no_grad()
  fwd+bwd  fused_ssim(img1, img2, padding, train=True).backward()   (gradient of img1 only)
3D shapes use fused_ssim3d when the installed version has it. Each case: --warmup untimed runs, then
--iters runs each timed with a pair of torch.cuda.Event; the median is reported. img1.grad is reset to
None outside the timed region, as optimizer.zero_grad() does. Each case is timed twice: as is, and with the
L2 cache flushed before every run (a 256 MB write outside the timed region, as triton's do_bench does;
the H200's L2 holds 60 MB, so the small shapes would otherwise stay in it): fused_ssim_us and
fused_ssim_flushed_us. kssim_perf_tests reports the same two ways (counters us_b2b and us_flushed). The inputs are random in [0, 1) and are
not rotated between iterations (the same as kssim_perf_tests).

  python3 perf_tests/time_fused_ssim.py --json fused.json --csv fused.csv [--kssim-json kssim.json]

With --kssim-json (a kssim_perf_tests --benchmark_out JSON file) a side-by-side table is printed, using
kssim's float results on the GPU execution space (Cuda or HIP).
"""

import argparse
import csv
import json
import statistics

import torch

import fused_ssim as fs

SHAPES_2D = [(1, 3, 1080, 1920), (1, 3, 2160, 3840), (8, 3, 512, 512), (1, 1, 4096, 4096), (64, 1, 128, 128)]
SHAPES_3D = [(1, 1, 128, 128, 128), (2, 3, 96, 96, 96), (1, 1, 256, 256, 256)]


def time_case(fn, before, warmup, iters):
    for _ in range(warmup):
        before()
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iters):
        before()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3)  # us
    return statistics.median(samples), min(samples)


def shape_name(shape):
    return "x".join(map(str, shape))


def kssim_lookup(results, family, mode, padding, shape):
    if results is None:
        return None, None
    prefix = f"{family}/{mode}/float/{padding}/{shape_name(shape)}/"
    for b in results.get("benchmarks", []):
        name = b.get("name", "")
        if name.startswith(prefix) and name[len(prefix):].split("/")[0] in ("Cuda", "HIP") \
                and not b.get("error_occurred"):
            return float(b.get("us_b2b", b["us"])), b.get("us_flushed")
    return None, None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--csv", help="write the results here as CSV")
    p.add_argument("--kssim-json", help="kssim_perf_tests JSON to print side by side")
    p.add_argument("--source", default="", help="fused-ssim revision, recorded in the output")
    args = p.parse_args()

    assert torch.cuda.is_available(), "fused-ssim timing needs a CUDA device"
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(20261129)
    has_3d = hasattr(fs, "fused_ssim3d") and getattr(fs, "is_3D_supported", True)
    flush = torch.empty(64 << 20, dtype=torch.float32, device=dev)  # 256 MB
    rows = []
    cases = [("ssim2d", s, fs.fused_ssim) for s in SHAPES_2D]
    if has_3d:
        cases += [("ssim3d", s, fs.fused_ssim3d) for s in SHAPES_3D]
    for family, shape, fn in cases:
        img1 = torch.rand(shape, device=dev, generator=gen, dtype=torch.float32).requires_grad_(True)
        img2 = torch.rand(shape, device=dev, generator=gen, dtype=torch.float32)
        for padding in ("valid", "same"):
            def forward():
                with torch.no_grad():
                    return fn(img1, img2, padding=padding, train=False)

            def forward_backward():
                fn(img1, img2, padding=padding, train=True).backward()

            def reset():
                img1.grad = None

            def reset_and_flush():
                img1.grad = None
                flush.zero_()

            value = float(forward())
            for mode, step in (("fwd", forward), ("fwd+bwd", forward_backward)):
                median, best = time_case(step, reset, args.warmup, args.iters)
                flushed, _ = time_case(step, reset_and_flush, args.warmup, args.iters)
                rows.append(dict(family=family, mode=mode, dtype="float", padding=padding, shape=shape_name(shape),
                                 fused_ssim_us=median, fused_ssim_min_us=best, fused_ssim_flushed_us=flushed,
                                 ssim=value))
                print(f"{family}/{mode}/float/{padding}/{shape_name(shape)}: median {median:9.1f} us, "
                      f"min {best:9.1f} us, ssim {value:.6f}", flush=True)
        del img1, img2
        torch.cuda.empty_cache()

    meta = dict(torch=torch.__version__, cuda=torch.version.cuda, device=torch.cuda.get_device_name(),
                fused_ssim_source=args.source, has_3d=has_3d, warmup=args.warmup, iters=args.iters)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(context=meta, results=rows), f, indent=1)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)

    if args.kssim_json:
        try:
            with open(args.kssim_json) as f:
                kssim = json.load(f)
        except (OSError, ValueError) as e:  # missing, or cut short by a timeout
            print(f"\nno side-by-side table: cannot read {args.kssim_json}: {e}")
            return
        print(f"\n{meta['device']}, torch {meta['torch']}")
        print(f"{'case (float)':48s} {'kssim us':>10s} {'fused us':>10s} {'kssim/fused':>11s}"
              f" {'flushed: kssim':>14s} {'fused':>8s} {'ratio':>7s}")
        for r in rows:
            k, kf = kssim_lookup(kssim, r["family"], r["mode"], r["padding"], tuple(map(int, r["shape"].split("x"))))
            ratio = f"{k / r['fused_ssim_us']:10.3f}x" if k else f"{'-':>11s}"
            ks = f"{k:10.1f}" if k else f"{'-':>10s}"
            ff = r["fused_ssim_flushed_us"]
            flushed = f" {kf:14.1f} {ff:8.1f} {kf / ff:7.3f}" if kf else f" {'-':>14s} {ff:8.1f}"
            print(f"{r['family']}/{r['mode']}/{r['padding']}/{r['shape']:18s} {ks} {r['fused_ssim_us']:10.1f} {ratio}{flushed}")


if __name__ == "__main__":
    main()
