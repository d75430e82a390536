# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.ssim against the float64 reference of reference_ssim.py: values, both gradients, gradcheck."""

import pytest
import torch

import kssim
from conftest import TOLERANCE, random_pair, relative_l2
from reference_ssim import ssim_and_gradients

# (shape, options): odd sizes, both paddings, other windows and constants, images and volumes.
CASES = [
    ((2, 3, 23, 31), {}),
    ((1, 2, 17, 20), {"padding": "same"}),
    ((3, 1, 16, 15), {"window_size": 7, "sigma": 1.0, "padding": "same"}),
    ((2, 2, 12, 13, 14), {"window_size": 5, "sigma": 0.8}),
    ((1, 1, 9, 10, 11), {"window_size": 3, "padding": "same", "k1": 0.02, "k2": 0.05, "data_range": 2.0}),
    ((2, 3, 23, 31), {"window": "float32"}),
    ((1, 2, 12, 13, 14), {"window": "float32", "padding": "same", "window_size": 7, "sigma": 1.1}),
]


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])) + str(sorted(c[1].items())))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_value_and_both_gradients_match_the_float64_reference(device, dtype, case, reduction):
    shape, options = case
    a, b = random_pair(shape, dtype, device, seed=len(shape) * 100 + shape[-1])
    a.requires_grad_(True)
    b.requires_grad_(True)
    value = kssim.ssim(a, b, reduction=reduction, **options)
    weights = None if reduction == "mean" else torch.linspace(-1.0, 2.0, shape[0], dtype=dtype, device=device)
    value.backward(weights)

    expected, g1, g2 = ssim_and_gradients(a.cpu(), b.cpu(), reduction, weights=None if weights is None else
                                          weights.cpu(), **options)
    value_tol, grad_tol = TOLERANCE[dtype]
    assert value.dtype == dtype and value.device == a.device
    assert value.shape == (() if reduction == "mean" else (shape[0],))
    assert (value.detach().cpu().double() - expected).abs().max() <= value_tol
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert relative_l2(a.grad.cpu(), g1) <= grad_tol
    assert relative_l2(b.grad.cpu(), g2) <= grad_tol


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("shape,options", [((2, 2, 9, 10), {"window_size": 5, "sigma": 1.2}),
                                           ((2, 2, 9, 10), {"window_size": 5, "padding": "same"}),
                                           ((1, 2, 7, 9), {"window_size": 5, "sigma": 1.2, "padding": "reflect"}),
                                           ((1, 2, 7, 9), {"window_size": 5, "sigma": 1.2, "padding": "replicate"}),
                                           ((1, 1, 4, 5, 6), {"window_size": 3, "sigma": 0.7, "padding": "reflect"}),
                                           ((1, 1, 4, 5, 6), {"window_size": 3, "sigma": 0.7, "padding": "replicate"}),
                                           ((1, 2, 5, 6, 7), {"window_size": 3, "sigma": 0.7})])
def test_gradcheck_float64(device, shape, options, reduction):
    a, b = random_pair(shape, torch.float64, device, seed=3)
    a.requires_grad_(True)
    b.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x, y: kssim.ssim(x, y, reduction=reduction, **options), (a, b))


@pytest.mark.parametrize("window", ["float32", "exact"])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_fused_ssim_is_the_mean_with_fused_ssim_constants(device, padding, window):
    a, b = random_pair((2, 3, 24, 33), torch.float32, device, seed=5)
    a.requires_grad_(True)
    value = kssim.fused_ssim(a, b, padding=padding, window=window)
    value.backward()
    expected, g1, _ = ssim_and_gradients(a.cpu(), b.cpu(), padding=padding, window=window)
    value_tol, grad_tol = TOLERANCE[torch.float32]
    assert abs(value.item() - expected.item()) <= value_tol
    assert relative_l2(a.grad.cpu(), g1) <= grad_tol
    assert b.grad is None  # img2 did not require a gradient
    # train=False: the same value; a backward pass through it would still be correct (recomputed)
    assert kssim.fused_ssim(a, b, padding=padding, train=False, window=window).item() == value.item()


@pytest.mark.parametrize("window", ["float32", "exact"])
def test_fused_ssim3d_on_volumes(device, window):
    a, b = random_pair((1, 2, 13, 14, 15), torch.float64, device, seed=6)
    a.requires_grad_(True)
    value = kssim.fused_ssim3d(a, b, padding="same", window=window)
    value.backward()
    expected, g1, _ = ssim_and_gradients(a.cpu(), b.cpu(), padding="same", window=window)
    value_tol, grad_tol = TOLERANCE[torch.float64]
    assert abs(value.item() - expected.item()) <= value_tol
    assert relative_l2(a.grad.cpu(), g1) <= grad_tol


def test_only_the_second_image_gets_a_gradient(device):
    a, b = random_pair((1, 3, 20, 21), torch.float32, device, seed=8)
    b.requires_grad_(True)
    kssim.ssim(a, b).backward()
    _, _, g2 = ssim_and_gradients(a.cpu(), b.cpu())
    assert a.grad is None and relative_l2(b.grad.cpu(), g2) <= TOLERANCE[torch.float32][1]
