#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Prints the worst errors of kssim.ssim against reference_ssim.py over the cases of
test_values_and_gradients.py (both reductions), per dtype and device: where the tests' tolerances come from.
Where pytorch-msssim is importable (its source tree on PYTHONPATH), also kssim.pytorch_msssim's ssim and ms_ssim
against pytorch-msssim's own, in float64 and float32: the value's relative difference and the gradients'
largest difference relative to their largest element.

  PYTHONPATH=build/default/python[:<pytorch-msssim tree>] python3 unit_tests/python/measure_errors.py
"""

import torch

try:
    import pytest  # noqa: F401  (the test modules imported below use it)
except ImportError:
    from run_without_pytest import install_stand_in
    install_stand_in()

import kssim
from conftest import _devices, random_pair, relative_l2
from reference_ssim import ssim_and_gradients
from test_values_and_gradients import CASES

for device in _devices():
    for dtype in (torch.float32, torch.float64):
        worst_value = worst_grad = 0.0
        for shape, options in CASES:
            for reduction in ("mean", "none"):
                a, b = random_pair(shape, dtype, device, seed=len(shape) * 100 + shape[-1])
                a.requires_grad_(True)
                b.requires_grad_(True)
                value = kssim.ssim(a, b, reduction=reduction, **options)
                weights = None if reduction == "mean" else torch.linspace(-1.0, 2.0, shape[0], dtype=dtype,
                                                                          device=device)
                value.backward(weights)
                expected, g1, g2 = ssim_and_gradients(a.cpu(), b.cpu(), reduction,
                                                      weights=None if weights is None else weights.cpu(), **options)
                worst_value = max(worst_value, float((value.detach().cpu().double() - expected).abs().max()))
                worst_grad = max(worst_grad, relative_l2(a.grad.cpu(), g1), relative_l2(b.grad.cpu(), g2))
        print(f"{device} {str(dtype).removeprefix('torch.')}: value {worst_value:.2e}, gradients (relative L2) "
              f"{worst_grad:.2e}")

try:
    import pytorch_msssim as peer
except ImportError:
    peer = None
if peer is not None:
    from kssim import pytorch_msssim as dropin
    for device in _devices():
        for dtype in (torch.float64, torch.float32):
            for name, shape in (("ssim", (2, 3, 64, 67)), ("ssim", (1, 1, 33, 40, 41)), ("ms_ssim", (2, 3, 176, 181)),
                                ("ms_ssim", (1, 2, 200, 256))):
                a, b = random_pair(shape, dtype, device, seed=shape[-1])
                a, b = a * 255, b * 255
                results = []
                for module in (peer, dropin):
                    x = a.clone().requires_grad_(True)
                    value = getattr(module, name)(x, b, data_range=255)
                    (grad,) = torch.autograd.grad(value, (x,))
                    results.append((value.detach().double(), grad.double()))
                (v0, g0), (v1, g1) = results
                print(f"pytorch_msssim.{name} {'x'.join(map(str, shape))} {device} {str(dtype).removeprefix('torch.')}: "
                      f"value {float((v1 - v0).abs() / v0.abs()):.1e} (relative), gradient "
                      f"{float((g1 - g0).abs().max() / g0.abs().max()):.1e} (of the largest)")
