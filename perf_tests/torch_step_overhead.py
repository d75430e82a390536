#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CPU time of one training step through kssim's PyTorch binding on a tiny image (16x16: the kernels take
almost nothing, so this is the binding's own cost: Python, the dispatcher, autograd), against the same
two operators called without autograd, through a Python torch.autograd.Function, and a two-op PyTorch
step. Medians of --repeat rounds of --iters steps, one thread.

  PYTHONPATH=build/default/python python3 perf_tests/torch_step_overhead.py
"""

import argparse
import statistics
import time

import torch

import kssim

ops = torch.ops.kssim
# kssim.ssim's options with same padding, as the operators take them (built as the package builds them).
OPTIONS = kssim.functional._operand("ssim", kssim.functional._options(11, 1.5, 0.01, 0.03, 1.0, "same", "exact"))


class PythonFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return ops.ssim(x, y, OPTIONS, 1, False)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return ops.ssim_backward(grad, x, y, OPTIONS, 1, False)[0], None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(1)
    a, b = torch.rand(1, 1, 16, 16), torch.rand(1, 1, 16, 16)
    x = a.clone().requires_grad_(True)
    one = torch.ones(())

    def raw():
        ops.ssim(a, b, OPTIONS, 1, False)
        ops.ssim_backward(one, a, b, OPTIONS, 1, False)

    def step(f):
        def run():
            x.grad = None
            f().backward()
        return run

    cases = {"operators, no autograd": raw,
             "kssim.fused_ssim (the package)": step(lambda: kssim.fused_ssim(x, b)),
             "operator with its registered autograd": step(lambda: ops.ssim(x, b, OPTIONS, 1, False)),
             "operators in a Python autograd.Function": step(lambda: PythonFunction.apply(x, b)),
             "PyTorch (x * b).mean() step, for scale": step(lambda: (x * b).mean())}
    print(f"kssim {kssim.__version__} ({kssim.build_info()}), torch {torch.__version__}")
    for name, run in cases.items():
        for _ in range(50):
            run()
        rounds = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            for _ in range(args.iters):
                run()
            rounds.append((time.perf_counter() - start) / args.iters * 1e6)
        print(f"{name:42s} {statistics.median(rounds):7.1f} us per step")


if __name__ == "__main__":
    main()
