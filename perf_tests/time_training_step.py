#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A 3D Gaussian Splatting style training step, timed per step on a CUDA device:

    loss = 0.8 * |render - gt|.mean() + 0.2 * (1 - SSIM(render, gt));  loss.backward();  adam.step()

on a 1x3xHxW render that is an nn.Parameter (1080p and 512x512 by default), with
  fused_ssim   fused_ssim.fused_ssim (https://github.com/rahul-goel/fused-ssim) + torch's L1
  kssim        kssim.fused_ssim (its drop-in) + torch's L1
  kssim_fused  kssim.l1_ssim_loss: the L1 term computed inside kssim's SSIM kernels
each eager and under torch.compile (the loss function compiled; fused-ssim's autograd.Function and kssim's
custom ops run as they are inside the compiled graph). Per-step time: the median of --iters steps each
between two CUDA events (`event_us`), and the mean of --iters steps back to back between two events
(`loop_us`, what a training loop sees, host overhead included). One process, the same timing for all.

  PYTHONPATH=<kssim build>/python:<fused-ssim tree> python3 perf_tests/time_training_step.py --csv steps.csv
"""

import argparse
import importlib
import statistics

import torch

from time_fused_ssim import write_results

SHAPES = [(1, 3, 1080, 1920), (1, 3, 512, 512)]


def make_loss(impl):
    if impl == "fused_ssim":
        fused = importlib.import_module("fused_ssim").fused_ssim
        return lambda r, gt: 0.8 * (r - gt).abs().mean() + 0.2 * (1 - fused(r, gt))
    kssim = importlib.import_module("kssim")
    if impl == "kssim":
        return lambda r, gt: 0.8 * (r - gt).abs().mean() + 0.2 * (1 - kssim.fused_ssim(r, gt))
    if impl == "kssim_fused":
        return lambda r, gt: kssim.l1_ssim_loss(r, gt, l1_weight=0.8)
    raise ValueError(f"unknown implementation {impl!r}")


def time_steps(step, warmup, iters):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        step()
    end.record()
    end.synchronize()
    return statistics.median(samples), start.elapsed_time(end) * 1e3 / iters


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", default="fused_ssim,kssim,kssim_fused")
    p.add_argument("--modes", default="eager,compile")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--csv")
    p.add_argument("--json")
    args = p.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA device"
    dev = torch.device("cuda")
    rows = []
    for shape in SHAPES:
        gen = torch.Generator(device=dev).manual_seed(7)
        gt = torch.rand(shape, device=dev, generator=gen)
        init = torch.rand(shape, device=dev, generator=gen)
        for impl in args.impl.split(","):
            for mode in args.modes.split(","):
                render = torch.nn.Parameter(init.clone())
                opt = torch.optim.Adam([render], lr=1e-3)
                loss_fn = make_loss(impl)
                if mode == "compile":
                    loss_fn = torch.compile(loss_fn)

                def step():
                    opt.zero_grad(set_to_none=True)
                    loss = loss_fn(render, gt)
                    loss.backward()
                    opt.step()

                try:
                    event_us, loop_us = time_steps(step, args.warmup, args.iters)
                except Exception as e:  # e.g. a peer that torch.compile cannot trace: recorded, not fatal
                    print(f"{impl} {mode} {shape}: failed: {type(e).__name__}: {e}", flush=True)
                    event_us = loop_us = float("nan")
                row = dict(shape="x".join(map(str, shape)), impl=impl, mode=mode, event_us=round(event_us, 1),
                           loop_us=round(loop_us, 1))
                rows.append(row)
                print(f"{row['shape']:>14s} {impl:12s} {mode:8s} per step: {event_us:8.1f} us (events), "
                      f"{loop_us:8.1f} us (back to back)", flush=True)
    for row in rows:  # ratio to fused-ssim + L1 in the same mode
        base = [r for r in rows if r["shape"] == row["shape"] and r["mode"] == row["mode"] and r["impl"] == "fused_ssim"]
        row["ratio_loop"] = round(row["loop_us"] / base[0]["loop_us"], 3) if base and base[0]["loop_us"] else None
    meta = dict(torch=torch.__version__, device=torch.cuda.get_device_name(), iters=args.iters)
    write_results(rows, meta, args.json, args.csv)


if __name__ == "__main__":
    main()
