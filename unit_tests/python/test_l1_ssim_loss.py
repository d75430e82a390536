# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.l1_ssim_loss, the fused L1 + SSIM loss: value and both gradients against a float64 reference
(reference_ssim.py's SSIM plus the L1 term in float64 PyTorch), gradcheck, opcheck, torch.compile, the
workspace cache across training steps, sign(0) = 0, and bad input."""

import math

import pytest
import torch

import kssim
from conftest import TOLERANCE, operand, random_pair, relative_l2
from kssim import _library
from reference_ssim import ssim


def reference_loss_and_gradients(img1, img2, l1_weight=0.8, padding="same", **options):
    x = img1.detach().cpu().double().requires_grad_(True)
    y = img2.detach().cpu().double().requires_grad_(True)
    loss = l1_weight * (x - y).abs().mean() + (1 - l1_weight) * (1 - ssim(x, y, padding=padding, **options))
    g1, g2 = torch.autograd.grad(loss, (x, y))
    return loss.detach(), g1, g2


CASES = [
    ((1, 3, 37, 45), {}),                                              # 3DGS: 0.8, same, window 11
    ((2, 2, 23, 31), {"padding": "valid", "l1_weight": 0.5}),
    ((1, 1, 16, 15), {"window_size": 7, "sigma": 1.0, "l1_weight": 1.0}),
    ((1, 2, 17, 20), {"l1_weight": 0.0, "padding": "valid"}),
    ((1, 2, 12, 13, 14), {"window_size": 5, "sigma": 0.8}),            # volumes
    ((1, 1, 9, 10, 11), {"window_size": 3, "padding": "valid", "l1_weight": 0.3, "data_range": 2.0}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])) + str(sorted(c[1].items())))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_value_and_both_gradients_match_the_float64_reference(device, dtype, case):
    shape, options = case
    a, b = random_pair(shape, dtype, device, seed=len(shape) * 100 + shape[-1])
    a.requires_grad_(True)
    b.requires_grad_(True)
    loss = kssim.l1_ssim_loss(a, b, **options)
    loss.backward()
    expected, g1, g2 = reference_loss_and_gradients(a, b, **options)
    value_tol, grad_tol = TOLERANCE[dtype]
    assert loss.dtype == dtype and loss.device == a.device and loss.shape == ()
    assert abs(loss.item() - expected.item()) <= value_tol
    assert relative_l2(a.grad.cpu(), g1) <= grad_tol
    assert relative_l2(b.grad.cpu(), g2) <= grad_tol


def test_matches_the_unfused_3dgs_loss(device):
    a, b = random_pair((1, 3, 40, 52), torch.float32, device, seed=8)
    a.requires_grad_(True)
    fused = kssim.l1_ssim_loss(a, b)
    (grad_fused,) = torch.autograd.grad(fused, a)
    unfused = 0.8 * (a - b).abs().mean() + 0.2 * (1 - kssim.fused_ssim(a, b))
    (grad_unfused,) = torch.autograd.grad(unfused, a)
    assert abs(fused.item() - unfused.item()) <= 1e-6
    assert relative_l2(grad_fused, grad_unfused) <= 1e-5


def test_equal_pixels_get_sign_zero(device):
    """Where img1 == img2 the L1 gradient is 0 (PyTorch's abs gradient), so only SSIM's remains."""
    a, b = random_pair((1, 2, 21, 24), torch.float64, device, seed=9)
    b = b.clone()
    b[..., ::2] = a[..., ::2]
    a.requires_grad_(True)
    b.requires_grad_(True)
    kssim.l1_ssim_loss(a, b).backward()
    _, g1, g2 = reference_loss_and_gradients(a, b)
    value_tol, grad_tol = TOLERANCE[torch.float64]
    assert relative_l2(a.grad.cpu(), g1) <= grad_tol
    assert relative_l2(b.grad.cpu(), g2) <= grad_tol


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_gradcheck_float64(device, padding):
    a, b = random_pair((1, 2, 9, 10), torch.float64, device, seed=3)
    a.requires_grad_(True)
    b.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda x, y: kssim.l1_ssim_loss(x, y, window_size=5, sigma=1.2, padding=padding), (a, b))


@pytest.mark.parametrize("padding", [1, 0, 2, 3])  # the operators' code: same, valid, reflect, replicate
def test_opcheck(device, padding):
    a, b = random_pair((2, 2, 16, 17), torch.float64, device, seed=1)
    a.requires_grad_(True)
    b.requires_grad_(True)
    options = operand("l1_ssim_loss", padding=padding)
    torch.library.opcheck(torch.ops.kssim.l1_ssim_loss.default, (a, b, options, 3, False))
    grad = torch.ones((), dtype=a.dtype, device=device)
    torch.library.opcheck(torch.ops.kssim.l1_ssim_loss_backward.default,
                          (grad, a.detach(), b.detach(), options, 1, False))


def test_torch_compile_fullgraph_matches_eager(device):
    a, b = random_pair((1, 3, 30, 33), torch.float32, device, seed=2)
    a.requires_grad_(True)
    eager = kssim.l1_ssim_loss(a, b)
    (g_eager,) = torch.autograd.grad(eager, a)
    compiled = torch.compile(lambda x, y: kssim.l1_ssim_loss(x, y), fullgraph=True, backend="aot_eager")
    value = compiled(a, b)
    (g_compiled,) = torch.autograd.grad(value, a)
    assert value.item() == eager.item()
    assert torch.equal(g_compiled, g_eager)


def test_training_steps_allocate_no_new_workspace(device):
    a, b = random_pair((1, 3, 24, 26), torch.float32, device, seed=4)
    a.requires_grad_(True)
    kssim.clear_cache()
    kssim.l1_ssim_loss(a, b).backward()
    before = _library.cache_stats()
    for _ in range(3):
        a.grad = None
        kssim.l1_ssim_loss(a, b).backward()
    after = _library.cache_stats()
    assert after.created == before.created  # no new workspace
    assert after.recomputed == before.recomputed  # every backward reused its forward's partial derivatives


@pytest.mark.parametrize("l1_weight", [-0.1, 1.5, math.nan, math.inf, "0.8", True])
def test_bad_weights_raise(device, l1_weight):
    a, b = random_pair((1, 1, 16, 16), torch.float32, device, seed=5)
    with pytest.raises(ValueError, match="l1_weight"):
        kssim.l1_ssim_loss(a, b, l1_weight=l1_weight)
    if isinstance(l1_weight, float):  # the operator checks too, for direct calls
        with pytest.raises(ValueError, match="l1_weight"):
            torch.ops.kssim.l1_ssim_loss(a, b, operand("l1_ssim_loss", padding=1, l1_weight=l1_weight), 0, False)


def test_bad_images_raise():
    a = torch.rand((1, 3, 10, 16))
    with pytest.raises(ValueError, match="window_size 11"):
        kssim.l1_ssim_loss(a, a, padding="valid")
    with pytest.raises(ValueError, match="same shape"):
        kssim.l1_ssim_loss(a, torch.rand((1, 3, 10, 17)))
    with pytest.raises(TypeError, match="float32, float64, float16 or bfloat16"):
        kssim.l1_ssim_loss(a.int(), a.int())
    with pytest.raises(TypeError, match="same dtype"):
        kssim.l1_ssim_loss(a.half(), a.bfloat16())
