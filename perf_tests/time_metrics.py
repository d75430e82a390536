#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every kssim metric through PyTorch against the C++ time of the same kernels, and MS-SSIM against
pytorch-msssim (https://github.com/VainF/pytorch-msssim, imported from its source tree), in one process.

Cases (float32, the C++ benchmark each is compared with in a kssim_perf_tests JSON, --kssim-json):
  ssim               kssim.ssim (valid, exact window)            ssim2d/<mode>/float/valid/<shape>/<gpu>
  l1_ssim_loss       kssim.l1_ssim_loss (same padding)            l1ssim2d/<mode>/float/same/<shape>/<gpu>
  ms_ssim            kssim.ms_ssim (five scales)                  msssim/<mode>/float/<shape>/<gpu>
  masked_weights     kssim.masked_ssim, mask (N, 1, H, W)         masked/weights/<mode>/float/valid/<shape>/<gpu>
  masked_normalized  the same, mode="normalized"                  masked/normalized/<mode>/float/valid/...
  kssim_msssim_dropin  kssim.pytorch_msssim.ms_ssim(data_range=1)  (pytorch-msssim's front door)
  pytorch_msssim     pytorch_msssim.ms_ssim(data_range=1)         (the peer, pure PyTorch)
  autograd_floor     (img1 * img2).mean(): one autograd node, what the engine costs on this host
Modes: fwd under torch.no_grad(); fwd+bwd with img1 requiring its gradient, .backward() on the value
(img1.grad reset outside the timed region). MS-SSIM's five scales need 161 pixels a side: its cases skip
64x1x128x128.

CUDA: each run between two CUDA events, the L2 cache flushed before it (time_fused_ssim.time_case, as
kssim_perf_tests' us_flushed); per case the median of --iters runs. CPU (--device cpu): each run timed with
time.perf_counter, median. Every round times every case once in turn, and the reported time is the median
of the rounds' medians (--rounds), so that drift of the machine hits every case alike.

The table gives, per case and mode, the time through PyTorch, the C++ us_flushed of the same kernels, the
overhead (their difference) and, for MS-SSIM, pytorch-msssim's time over kssim's.

  PYTHONPATH=<kssim build>/python:<pytorch-msssim tree> python3 perf_tests/time_metrics.py \\
      --kssim-json bench.json --json metrics.json --csv metrics.csv
  PYTHONPATH=... python3 perf_tests/time_metrics.py --device cpu --cases ms_ssim,kssim_msssim_dropin,pytorch_msssim
  PYTHONPATH=... python3 perf_tests/time_metrics.py --kernels kernels.json   # what each step launches (--modes)
"""

import argparse
import importlib
import json
import statistics
import time

import torch

from time_fused_ssim import shape_name, write_results

SHAPES = [(1, 3, 1080, 1920), (8, 3, 512, 512), (64, 1, 128, 128)]
MS_SSIM_MIN = 161  # (11 - 1) * 2^4 + 1


def make_cases():
    """name -> (loss(x, y, mask) -> 0-dim tensor, C++ benchmark name of (mode, shape), needs MS-SSIM's size)."""
    kssim = importlib.import_module("kssim")
    cases = {
        "ssim": (lambda x, y, m: kssim.ssim(x, y), lambda mode, s: f"ssim2d/{mode}/float/valid/{s}/", False),
        "l1_ssim_loss": (lambda x, y, m: kssim.l1_ssim_loss(x, y),
                         lambda mode, s: f"l1ssim2d/{mode}/float/same/{s}/", False),
        "ms_ssim": (lambda x, y, m: kssim.ms_ssim(x, y), lambda mode, s: f"msssim/{mode}/float/{s}/", True),
        "masked_weights": (lambda x, y, m: kssim.masked_ssim(x, y, m),
                           lambda mode, s: f"masked/weights/{mode}/float/valid/{s}/", False),
        "masked_normalized": (lambda x, y, m: kssim.masked_ssim(x, y, m, mode="normalized"),
                              lambda mode, s: f"masked/normalized/{mode}/float/valid/{s}/", False),
        "kssim_msssim_dropin": (lambda x, y, m: importlib.import_module("kssim.pytorch_msssim").ms_ssim(
            x, y, data_range=1.0), None, True),
        "autograd_floor": (lambda x, y, m: (x * y).mean(), None, False),
    }
    try:
        peer = importlib.import_module("pytorch_msssim")
        if not hasattr(peer, "__file__") or "kssim" in peer.__name__:
            raise ImportError
        cases["pytorch_msssim"] = (lambda x, y, m: peer.ms_ssim(x, y, data_range=1.0), None, True)
    except ImportError:
        print("pytorch_msssim is not importable: its cases are left out (put its source tree on PYTHONPATH)")
    return cases


def cpp_time(results, prefix):
    """us_flushed (else us) of the first GPU benchmark whose name starts with prefix, or None."""
    if results is None or prefix is None:
        return None
    for b in results.get("benchmarks", []):
        name = b.get("name", "")
        if name.startswith(prefix) and name[len(prefix):].split("/")[0] in ("Cuda", "HIP", "OpenMP", "Serial") \
                and not b.get("error_occurred"):
            return float(b.get("us_flushed", b["us"]))
    return None


def timer(device, iters):
    """A function timing fn (after before()) iters times, returning the median in us."""
    if device == "cuda":
        from time_fused_ssim import time_case
        flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")  # 256 MB, as do_bench

        def run(fn, before):
            def before_and_flush():
                before()
                flush.zero_()
            return time_case(fn, before_and_flush, warmup=3, iters=iters)[0]
        return run

    def run_cpu(fn, before):
        before()
        fn()
        samples = []
        for _ in range(iters):
            before()
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) * 1e6)
        return statistics.median(samples)
    return run_cpu


def short_name(kernel):
    """A kernel's name without the launch wrapper and namespaces that every Kokkos kernel repeats."""
    for noise in ("void Kokkos::Impl::cuda_parallel_launch_local_memory<", "void Kokkos::Impl::cuda_parallel_launch_",
                  "Kokkos::Impl::", "kssim::impl::", "Kokkos::"):
        kernel = kernel.replace(noise, "")
    return kernel[:150]


def kernel_table(cases, inputs, shapes, modes, steps=5):
    """--kernels: per case, mode and shape, the CUDA kernels of `steps` steps (torch.profiler; fwd under
    torch.no_grad(), fwd+bwd with .backward()): how many per step, their summed device time per step, and each
    kernel's name, launches per step and mean time. What runs besides the C++ benchmark's kernels (a fill of
    the upstream ones, a result copy) shows here; the rest of an overhead is time the GPU waits for the host."""
    from torch.profiler import ProfilerActivity, profile

    def device_us(e):
        return getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)

    def step(loss, x, b, m, mode):
        if mode == "fwd":
            with torch.no_grad():
                loss(x, b, m)
        else:
            x.grad = None
            loss(x, b, m).backward()
    rows = []
    for shape in shapes:
        a, b, m = inputs[shape]
        for name, (loss, _, needs_ms_size) in cases.items():
            if needs_ms_size and min(shape[2:]) < MS_SSIM_MIN:
                continue
            for mode in modes:
                x = a.clone().requires_grad_(mode != "fwd")
                for _ in range(3):
                    step(loss, x, b, m, mode)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(steps):
                        step(loss, x, b, m, mode)
                    torch.cuda.synchronize()
                kernels = [e for e in prof.key_averages()
                           if e.device_type == torch.autograd.DeviceType.CUDA and device_us(e) > 0]
                per_step = sum(e.count for e in kernels) / steps
                busy = sum(device_us(e) for e in kernels) / steps
                print(f"{name} {mode} {shape_name(shape)}: {per_step:.1f} kernels per step, {busy:.1f} us of kernels")
                for e in sorted(kernels, key=lambda e: -device_us(e)):
                    print(f"    {e.count / steps:5.1f} x {device_us(e) / e.count:8.2f} us  {short_name(e.key)}")
                rows.append(dict(case=name, mode=mode, shape=shape_name(shape), kernels_per_step=per_step,
                                 kernel_us_per_step=busy,
                                 kernels=[dict(name=e.key, per_step=e.count / steps,
                                               us=device_us(e) / e.count) for e in kernels]))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--shapes", default=",".join(shape_name(s) for s in SHAPES), help="comma-separated NxCxHxW")
    p.add_argument("--cases", default=None, help="comma-separated case names (default: all importable)")
    p.add_argument("--modes", default="fwd,fwd+bwd")
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--kssim-json", default=None, help="kssim_perf_tests --benchmark_out JSON of the same machine")
    p.add_argument("--json", default=None)
    p.add_argument("--csv", default=None)
    p.add_argument("--kernels", default=None, metavar="JSON",
                   help="instead of timing: the CUDA kernels of each case's steps in --modes (torch.profiler), to JSON")
    args = p.parse_args()

    kssim = importlib.import_module("kssim")
    cases = make_cases()
    if args.cases:
        unknown = set(args.cases.split(",")) - set(cases)
        if unknown:
            raise SystemExit(f"unknown or unavailable cases: {sorted(unknown)}")
        cases = {k: v for k, v in cases.items() if k in args.cases.split(",")}
    cpp = json.load(open(args.kssim_json)) if args.kssim_json else None
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    modes = args.modes.split(",")
    run = timer(args.device, args.iters)

    gen = torch.Generator().manual_seed(20261206)
    inputs = {}
    for shape in shapes:
        a = torch.rand(shape, generator=gen)
        b = (0.7 * a + 0.3 * torch.rand(shape, generator=gen))
        m = torch.rand((shape[0], 1) + shape[2:], generator=gen)
        inputs[shape] = tuple(t.to(args.device) for t in (a, b, m))

    if args.kernels:
        rows = kernel_table({k: v for k, v in cases.items() if k != "pytorch_msssim"}, inputs, shapes, modes)
        with open(args.kernels, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), kssim=kssim.__version__, rows=rows), f, indent=1)
        return

    # (case, mode, shape) -> one median per round
    samples = {}
    for _ in range(args.rounds):
        for shape in shapes:
            a, b, m = inputs[shape]
            for name, (loss, _, needs_ms_size) in cases.items():
                if needs_ms_size and min(shape[2:]) < MS_SSIM_MIN:
                    continue
                for mode in modes:
                    if mode == "fwd":
                        def fn(loss=loss, a=a, b=b, m=m):
                            with torch.no_grad():
                                loss(a, b, m)
                        before = lambda: None
                    else:
                        x = a.clone().requires_grad_(True)

                        def fn(loss=loss, x=x, b=b, m=m):
                            loss(x, b, m).backward()

                        def before(x=x):
                            x.grad = None
                    samples.setdefault((name, mode, shape), []).append(run(fn, before))

    device_name = torch.cuda.get_device_name() if args.device == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    rows = []
    for (name, mode, shape), values in samples.items():
        us = statistics.median(values)
        prefix = cases[name][1]
        c = cpp_time(cpp, prefix(mode, shape_name(shape)) if prefix else None)
        rows.append(dict(case=name, mode=mode, shape=shape_name(shape), device=device_name,
                         torch_us=round(us, 2), cpp_us_flushed=None if c is None else round(c, 2),
                         overhead_us=None if c is None else round(us - c, 2),
                         rounds=" ".join(f"{v:.1f}" for v in values)))
    by_key = {(r["case"], r["mode"], r["shape"]): r for r in rows}
    for r in rows:
        peer = by_key.get(("pytorch_msssim", r["mode"], r["shape"]))
        r["pytorch_msssim_over_this"] = (round(peer["torch_us"] / r["torch_us"], 2)
                                         if peer and r["case"] in ("ms_ssim", "kssim_msssim_dropin") else None)
        floor = by_key.get(("autograd_floor", r["mode"], r["shape"]))
        r["over_autograd_floor_us"] = round(r["torch_us"] - floor["torch_us"], 2) if floor else None

    print(f"{device_name}; kssim {kssim.__version__} ({kssim.build_info()}); torch {torch.__version__}; "
          f"{args.rounds} rounds x {args.iters} runs, medians")
    print(f"{'case':20} {'mode':8} {'shape':16} {'torch us':>10} {'C++ us':>10} {'overhead':>9} "
          f"{'-floor':>8} {'peer/this':>9}")
    for r in rows:
        def f(v, fmt):
            return format(v, fmt) if v is not None else format("-", ">" + fmt.split(".")[0])
        print(f"{r['case']:20} {r['mode']:8} {r['shape']:16} {r['torch_us']:10.1f} {f(r['cpp_us_flushed'], '10.1f')} "
              f"{f(r['overhead_us'], '9.1f')} {f(r['over_autograd_floor_us'], '8.1f')} "
              f"{f(r['pytorch_msssim_over_this'], '9.2f')}")
    meta = dict(device=device_name, torch=torch.__version__, kssim=kssim.__version__, build=kssim.build_info(),
                rounds=args.rounds, iters=args.iters, kssim_json=args.kssim_json)
    write_results(rows, meta, args.json, args.csv)


if __name__ == "__main__":
    main()
