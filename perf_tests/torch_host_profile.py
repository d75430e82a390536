#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the host time of kssim's PyTorch binding goes, layer by layer, on CUDA tensors (or, with
--device cpu, on CPU tensors: host time only, the kernels included).

For each shape: host microseconds per call (perf_counter around --iters calls back to back, then one
synchronize: the host's own cost whenever it exceeds the GPU's) of
  fused_ssim.fwd      kssim.fused_ssim(x, y, padding, train=False) under no_grad (Python checks + op)
  op.fwd              torch.ops.kssim.ssim.default(...) under no_grad (no Python checks)
  fused_ssim.fwd+bwd  kssim.fused_ssim(x, y, padding).backward()
  op.fwd+bwd          the operators with autograd, called directly, then .backward()
  op.bwd              torch.ops.kssim.ssim_backward.default(...) alone (after one forward)
  peer.fwd / peer.fwd+bwd  fused-ssim's, if importable
and the GPU time per call of the same (CUDA events around the same loop). Then a torch.profiler table of
--profile-steps fwd+bwd steps (self CPU time per operator and per CUDA runtime call), and the calls per
step of each operator (aten::copy_ and the like), for a forward step and a forward + backward step.

  PYTHONPATH=<build>/python:<fused-ssim> python3 perf_tests/torch_host_profile.py --json host.json
  PYTHONPATH=<build>/python python3 perf_tests/torch_host_profile.py --device cpu --shapes 1x3x512x512 64x1x128x128 \
      --iters 20 --repeats 15
"""

import argparse
import json
import time

import torch

import kssim

SHAPES = [((64, 1, 128, 128), "same"), ((1, 3, 1080, 1920), "valid"), ((1, 3, 1080, 1920), "same")]


def host_us(fn, iters, repeats=1):
    """Microseconds per call: the best of `repeats` loops of `iters` calls (a loaded host's noise only adds)."""
    for _ in range(10):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - t0) / iters * 1e6)
    return round(best, 1), None


def calls_per_step(step, steps):
    """{operator: calls per step} of `steps` calls of step() under torch.profiler (CPU activity)."""
    for _ in range(3):
        step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    return {e.key: e.count / steps for e in prof.key_averages()}


def host_and_gpu_us(fn, iters):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    host = (time.perf_counter() - t0) / iters * 1e6
    end.synchronize()
    return round(host, 1), round(start.elapsed_time(end) * 1e3 / iters, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--profile-steps", type=int, default=20)
    p.add_argument("--json")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--repeats", type=int, default=1, help="--device cpu: best of this many loops of --iters calls")
    p.add_argument("--shapes", nargs="*", help="NxCxHxW ... (padding same); default: " +
                   " ".join("x".join(map(str, s)) + f"({pad})" for s, pad in SHAPES))
    args = p.parse_args()
    device = args.device
    shapes = SHAPES if not args.shapes else [(tuple(int(v) for v in s.split("x")), "same") for s in args.shapes]
    timer = host_and_gpu_us if device == "cuda" else lambda fn, iters: host_us(fn, iters, args.repeats)
    ops = torch.ops.kssim
    try:
        import fused_ssim as peer
    except ImportError:
        peer = None
    results = []
    counts = {}
    for shape, padding in shapes:
        gen = torch.Generator(device=device).manual_seed(1)
        x = torch.rand(shape, device=device, generator=gen).requires_grad_(True)
        y = torch.rand(shape, device=device, generator=gen)
        # fused_ssim's options as the operators take them (its float32 window), built as the package builds them.
        options = kssim.functional._operand("ssim", kssim.functional._options(11, 1.5, 0.01, 0.03, 1.0, padding,
                                                                              "float32"))

        def fwd():
            with torch.no_grad():
                kssim.fused_ssim(x, y, padding, train=False)

        def op_fwd():
            with torch.no_grad():
                ops.ssim.default(x, y, options, 0, False)

        def fwd_bwd():
            x.grad = None
            kssim.fused_ssim(x, y, padding).backward()

        def op_fwd_bwd():
            x.grad = None
            ops.ssim.default(x, y, options, 1, False).backward()

        one = torch.ones((), device=device)
        ops.ssim.default(x.detach(), y, options, 1, False)

        def op_bwd():
            ops.ssim_backward.default(one, x.detach(), y, options, 1, False)

        cases = [("fused_ssim.fwd", fwd), ("op.fwd", op_fwd), ("fused_ssim.fwd+bwd", fwd_bwd),
                 ("op.fwd+bwd", op_fwd_bwd), ("op.bwd", op_bwd)]
        if peer is not None and device == "cuda":  # fused-ssim computes on CUDA tensors only
            def peer_fwd():
                with torch.no_grad():
                    peer.fused_ssim(x, y, padding, train=False)

            def peer_fwd_bwd():
                x.grad = None
                peer.fused_ssim(x, y, padding).backward()
            cases += [("peer.fwd", peer_fwd), ("peer.fwd+bwd", peer_fwd_bwd)]
        for name, fn in cases:
            host, gpu = timer(fn, args.iters)
            row = dict(shape="x".join(map(str, shape)), padding=padding, case=name, host_us=host, gpu_us=gpu)
            results.append(row)
            gpu_text = f"  gpu {gpu:8.1f} us" if gpu is not None else ""
            print(f"{row['shape']:>14s} {padding:5s} {name:20s} host {host:8.1f} us{gpu_text}", flush=True)
        counted = [("fused_ssim.fwd", fwd), ("fused_ssim.fwd+bwd", fwd_bwd)]
        if peer is not None and device == "cuda":  # the peer's calls, for comparison
            counted += [("peer.fwd", peer_fwd), ("peer.fwd+bwd", peer_fwd_bwd)]
        for name, fn in counted:
            per_step = calls_per_step(fn, args.profile_steps)
            counts["x".join(map(str, shape)) + " " + name] = per_step
            ops_text = ", ".join(f"{k} {v:g}" for k, v in sorted(per_step.items()) if k.startswith(("aten::", "kssim::")))
            print(f"{'x'.join(map(str, shape)):>14s} {padding:5s} {name:20s} calls per step: {ops_text}", flush=True)

    shape, padding = shapes[0]
    x = torch.rand(shape, device=device).requires_grad_(True)
    y = torch.rand(shape, device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(5):
        kssim.fused_ssim(x, y, padding).backward()
    sync()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(args.profile_steps):
            x.grad = None
            kssim.fused_ssim(x, y, padding).backward()
        sync()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30)
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
            json.dump(dict(torch=torch.__version__, device=name, kssim=kssim.build_info(), results=results,
                           calls_per_step=counts, profile=table), f, indent=1)


if __name__ == "__main__":
    main()
