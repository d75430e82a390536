#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Time fused-ssim (https://github.com/rahul-goel/fused-ssim) and kssim's PyTorch binding (the kssim
package, src/python) on the shapes of kssim_perf_tests, in one process.

Needs the installed (or importable) packages that --impl names (this script builds nothing) and a CUDA
device. For each shape, float32, padding "valid" and "same", and each implementation F (fused_ssim.fused_ssim
or kssim.fused_ssim; fused_ssim3d for the 3D shapes when fused-ssim has it):
  fwd      F(img1, img2, padding, train=False) under torch.no_grad()
  fwd+bwd  F(img1, img2, padding, train=True).backward()   (gradient of img1 only)
Each case: --warmup untimed runs, then --iters runs each timed with a pair of torch.cuda.Event; the median
is reported. img1.grad is reset to None outside the timed region, as optimizer.zero_grad() does. Each case
is timed twice: as is, and with the L2 cache flushed before every run (a 256 MB write outside the timed
region, as triton's do_bench does; the H200's L2 holds 60 MB, so the small shapes would otherwise stay in
it): <impl>_us and <impl>_flushed_us (fused_ssim_us, kssim_torch_us, ...). kssim_perf_tests reports the
same two ways (counters us_b2b and us_flushed). With --do-bench, also triton.testing.do_bench's median
(<impl>_do_bench_us). The inputs are random in [0, 1) and are not rotated between iterations (the same as
kssim_perf_tests).

  python3 perf_tests/time_fused_ssim.py --json fused.json --csv fused.csv [--kssim-json kssim.json]
  python3 perf_tests/time_fused_ssim.py --impl fused_ssim,kssim --do-bench --shapes 2d --json both.json

With --kssim-dtypes float32,float16,bfloat16 the binding is also timed on 16-bit copies of the same images
(columns kssim_torch_float16_us, ...; the gradient in the images' type): kssim's 16-bit storage against
fused-ssim's float32 in the same run (fused-ssim has no 16-bit kernels).

With --kssim-json (a kssim_perf_tests --benchmark_out JSON file) a side-by-side table is printed, using
kssim's float results on the GPU execution space (Cuda or HIP): kssim's C++ time, then each
implementation's, and their ratios to the first one's (the binding's over the C++ one: its overhead).
"""

import argparse
import csv
import importlib
import itertools
import json
import statistics

import torch

SHAPES_2D = [(1, 3, 1080, 1920), (1, 3, 2160, 3840), (8, 3, 512, 512), (1, 1, 4096, 4096), (64, 1, 128, 128)]
SHAPES_3D = [(1, 1, 128, 128, 128), (2, 3, 96, 96, 96), (1, 1, 256, 256, 256)]


# --impl name -> (module, column prefix of its results, run under torch.autocast (float16), image dtype).
# fussim (https://github.com/OpsiClear/fussim, a fork of fused-ssim) runs its float16 kernels under autocast;
# fussim_fp16 hands it float16 images there, as kssim's float16 column does.
# autograd_floor is no SSIM: (img1 * img2).mean(), one elementwise autograd node, timed the same way. Its
# fwd+bwd is what PyTorch's autograd engine costs on this host for any implementation (the backward of CUDA
# tensors runs on the engine's device thread): where an SSIM's fwd+bwd is near it, the host sets its time.
IMPLEMENTATIONS = {"fused_ssim": ("fused_ssim", "fused_ssim", False, "float32"),
                   "kssim": ("kssim", "kssim_torch", False, "float32"),
                   "fussim": ("fussim", "fussim", False, "float32"),
                   "fussim_fp16": ("fussim", "fussim_fp16", True, "float16"),
                   "autograd_floor": (None, "autograd_floor", False, "float32")}


class AutogradFloor:
    """The stand-in module of --impl autograd_floor."""

    @staticmethod
    def fused_ssim(img1, img2, padding="same", train=True):
        return (img1 * img2).mean()

    fused_ssim3d = fused_ssim


def time_do_bench(fn, tensors):
    from triton.testing import do_bench
    return do_bench(fn, grad_to_none=tensors, return_mode="median") * 1e3  # us


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


def write_results(rows, meta, json_path, csv_path):
    """The rows with their context as JSON, and the rows alone as CSV, to the paths given (None: not written)."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(context=meta, results=rows), f, indent=1)
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", default="fused_ssim",
                   help="comma-separated: fused_ssim, kssim, fussim, fussim_fp16, autograd_floor")
    p.add_argument("--do-bench", action="store_true", help="also time with triton.testing.do_bench")
    p.add_argument("--shapes", choices=("all", "2d", "3d"), default="all")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--rounds", type=int, default=1,
                   help="time every implementation this many times, alternating, and keep each time's median "
                        "(host-bound cases, e.g. 64x1x128x128 fwd+bwd, vary by tens of us from one timing to the next)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--csv", help="write the results here as CSV")
    p.add_argument("--kssim-json", help="kssim_perf_tests JSON to print side by side")
    p.add_argument("--source", default="", help="fused-ssim revision, recorded in the output")
    p.add_argument("--kssim-dtypes", default="float32", help="comma-separated image dtypes for kssim")
    args = p.parse_args()
    if args.rounds < 1:
        p.error("--rounds needs a positive number")

    assert torch.cuda.is_available(), "fused-ssim timing needs a CUDA device"
    impls = {}  # column prefix -> (module, image dtype, autocast)
    for name in args.impl.split(","):
        module, prefix, autocast, default_dtype = IMPLEMENTATIONS[name]
        dtypes = args.kssim_dtypes.split(",") if name == "kssim" else [default_dtype]
        for dtype in dtypes:
            column = prefix if dtype == default_dtype else f"{prefix}_{dtype}"
            impls[column] = (importlib.import_module(module) if module else AutogradFloor, dtype, autocast)
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(20261129)
    fs = impls.get("fused_ssim", (None,))[0]
    has_3d = fs is None or (hasattr(fs, "fused_ssim3d") and getattr(fs, "is_3D_supported", True))
    flush = torch.empty(64 << 20, dtype=torch.float32, device=dev)  # 256 MB
    rows = []
    cases = [("ssim2d", s, "fused_ssim") for s in SHAPES_2D if args.shapes != "3d"]
    if has_3d and args.shapes != "2d":
        cases += [("ssim3d", s, "fused_ssim3d") for s in SHAPES_3D]
    for family, shape, fn_name in cases:
        base1 = torch.rand(shape, device=dev, generator=gen, dtype=torch.float32)
        base2 = torch.rand(shape, device=dev, generator=gen, dtype=torch.float32)
        images = {d: (base1.to(getattr(torch, d)).requires_grad_(True), base2.to(getattr(torch, d)))
                  for d in {dtype for _, dtype, _ in impls.values()}}
        for padding in ("valid", "same"):
            results = {mode: dict(family=family, mode=mode, dtype="float", padding=padding, shape=shape_name(shape))
                       for mode in ("fwd", "fwd+bwd")}
            samples = {mode: {} for mode in results}  # mode -> column -> one time per round
            for round_index, (prefix, (module, dtype, autocast)) in itertools.product(range(args.rounds), impls.items()):
                fn = getattr(module, fn_name, None)
                if fn is None:  # e.g. a peer without volumes
                    if round_index == 0:
                        print(f"{prefix}: no {fn_name}, skipped", flush=True)
                    continue
                img1, img2 = images[dtype]

                def forward():
                    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=autocast):
                        return fn(img1, img2, padding=padding, train=False)

                def forward_backward():
                    with torch.autocast("cuda", dtype=torch.float16, enabled=autocast):
                        loss = fn(img1, img2, padding=padding, train=True)
                    loss.backward()

                def reset(img1=img1):
                    img1.grad = None

                def reset_and_flush(img1=img1):
                    img1.grad = None
                    flush.zero_()

                value = float(forward())
                for mode, step in (("fwd", forward), ("fwd+bwd", forward_backward)):
                    median, best = time_case(step, reset, args.warmup, args.iters)
                    flushed, _ = time_case(step, reset_and_flush, args.warmup, args.iters)
                    times = {f"{prefix}_us": median, f"{prefix}_min_us": best, f"{prefix}_flushed_us": flushed}
                    if args.do_bench:
                        times[f"{prefix}_do_bench_us"] = time_do_bench(step, [img1])
                    for column, t in times.items():
                        samples[mode].setdefault(column, []).append(t)
                    results[mode]["ssim" if prefix == "fused_ssim" else f"{prefix}_ssim"] = value
                    print(f"{prefix} {family}/{mode}/{dtype}/{padding}/{shape_name(shape)}: median {median:9.1f} us, "
                          f"min {best:9.1f} us, flushed {flushed:9.1f} us, ssim {value:.6f}"
                          + (f" (round {round_index + 1})" if args.rounds > 1 else ""), flush=True)
            for mode, columns in samples.items():  # each column: the median of its rounds
                results[mode].update({column: statistics.median(ts) for column, ts in columns.items()})
            rows += results.values()
        del images, base1, base2
        torch.cuda.empty_cache()

    meta = dict(torch=torch.__version__, cuda=torch.version.cuda, device=torch.cuda.get_device_name(),
                fused_ssim_source=args.source, has_3d=has_3d, warmup=args.warmup, iters=args.iters,
                implementations=list(impls), do_bench=args.do_bench, rounds=args.rounds)
    if "kssim_torch" in impls:
        kssim_module = impls["kssim_torch"][0]
        meta.update(kssim=kssim_module.__version__, kssim_build=kssim_module.build_info(),
                    kssim_dtypes=args.kssim_dtypes)
    write_results(rows, meta, args.json, args.csv)

    if args.kssim_json:
        try:
            with open(args.kssim_json) as f:
                kssim = json.load(f)
        except (OSError, ValueError) as e:  # missing, or cut short by a timeout
            print(f"\nno side-by-side table: cannot read {args.kssim_json}: {e}")
            return
        print(f"\n{meta['device']}, torch {meta['torch']}; ratio = time / kssim C++ time")
        timings = [("", "back to back"), ("_flushed", "L2 flushed")] + ([("_do_bench", "do_bench")] if args.do_bench else [])
        for suffix, title in timings:
            print(f"\n{title}: {'case (float)':35s} {'C++ us':>9s}" + "".join(f" {p + ' us':>15s} {'ratio':>6s}" for p in impls))
            for r in rows:
                k, kf = kssim_lookup(kssim, r["family"], r["mode"], r["padding"], tuple(map(int, r["shape"].split("x"))))
                cpp = kf if suffix in ("_flushed", "_do_bench") else k  # do_bench clears the L2 too
                case = f"{r['family']}/{r['mode']}/{r['padding']}/{r['shape']}"
                line = f"{'':{len(title) + 2}s}{case:35s} " + (f"{cpp:9.1f}" if cpp else f"{'-':>9s}")
                for p in impls:
                    t = r.get(f"{p}{suffix}_us")
                    if t is None:
                        line += f" {'-':>15s} {'-':>6s}"
                        continue
                    line += f" {t:15.1f} " + (f"{t / cpp:6.3f}" if cpp else f"{'-':>6s}")
                print(line)

if __name__ == "__main__":
    main()
