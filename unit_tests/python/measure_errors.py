#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Prints the worst errors of kssim.ssim against reference_ssim.py over the cases of
test_values_and_gradients.py (both reductions), per dtype and device: where the tests' tolerances come from.

  PYTHONPATH=build/default/python python3 unit_tests/python/measure_errors.py
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
