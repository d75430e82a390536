# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.masked_ssim and kssim.MaskedSSIM: value and both gradients against reference_ssim.masked_ssim (float64
PyTorch written from the definition) in both modes, both paddings, masks of 1 or C channels, both reductions;
gradcheck, opcheck and bad input."""

import pytest
import torch

import kssim
from conftest import TOLERANCE, operand, random_pair, relative_l2
import reference_ssim as ref


def random_mask(shape, device, seed, zeros=True):
    """Weights in [0, 1], a third of them 0 (pixels that never count, or never enter a window)."""
    gen = torch.Generator().manual_seed(seed)
    m = torch.rand(shape, generator=gen, dtype=torch.float64)
    if zeros:
        m = torch.where(torch.rand(shape, generator=gen, dtype=torch.float64) < 0.33, torch.zeros_like(m), m)
    return m.to(device)


CASES = [
    ((2, 3, 16, 17), 1, {}),
    ((2, 2, 15, 14), 2, {"padding": "same", "window_size": 7, "sigma": 1.0}),
    ((1, 3, 13, 12), 3, {"window_size": 5, "data_range": 2.0, "k1": 0.02}),
    ((1, 2, 9, 10, 11), 1, {"window_size": 5, "sigma": 1.0}),                   # volumes
    ((2, 1, 8, 9, 10), 1, {"window_size": 3, "padding": "same"}),
]


def _reference(img1, img2, mask, **options):
    x = img1.detach().cpu().double().requires_grad_(True)
    y = img2.detach().cpu().double().requires_grad_(True)
    value = ref.masked_ssim(x, y, mask.cpu(), **options)
    g1, g2 = torch.autograd.grad(value.sum(), (x, y))
    return value.detach(), g1, g2


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])) + f"m{c[1]}")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode", ["weights", "normalized"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_value_and_both_gradients_match_the_float64_reference(device, dtype, case, mode, reduction):
    shape, mask_channels, options = case
    img1, img2 = random_pair(shape, dtype, device, seed=shape[-1] + mask_channels)
    mask = random_mask((shape[0], mask_channels) + shape[2:], device, seed=shape[-2]).to(dtype)
    img1.requires_grad_(True)
    img2.requires_grad_(True)
    value = kssim.masked_ssim(img1, img2, mask, mode=mode, reduction=reduction, **options)
    assert value.dtype == dtype and value.shape == (() if reduction == "mean" else (shape[0],))
    g1, g2 = torch.autograd.grad(value.sum(), (img1, img2))
    expected, e1, e2 = _reference(img1, img2, mask, mode=mode, reduction=reduction, **options)
    value_tol, grad_tol = TOLERANCE[dtype]
    assert relative_l2(value.detach().cpu(), expected) < 10 * value_tol
    assert relative_l2(g1.cpu(), e1) < 10 * grad_tol
    assert relative_l2(g2.cpu(), e2) < 10 * grad_tol


def test_a_mask_of_ones_is_ssim(device):
    img1, img2 = random_pair((2, 2, 14, 15), torch.float64, device, seed=3)
    ones = torch.ones((2, 1, 14, 15), dtype=torch.float64, device=device)
    expected = kssim.ssim(img1, img2, reduction="none")
    for mode in ("weights", "normalized"):
        assert relative_l2(kssim.masked_ssim(img1, img2, ones, mode=mode, reduction="none").cpu(),
                           expected.cpu()) < 1e-13


def test_a_bool_mask_and_a_zero_mask(device):
    img1, img2 = random_pair((1, 2, 14, 15), torch.float32, device, seed=4)
    m = random_mask((1, 1, 14, 15), device, seed=4) > 0.5
    assert torch.equal(kssim.masked_ssim(img1, img2, m), kssim.masked_ssim(img1, img2, m.float()))
    assert torch.isnan(kssim.masked_ssim(img1, img2, torch.zeros_like(img1)))


@pytest.mark.parametrize("mode", ["weights", "normalized"])
def test_gradcheck_in_float64(device, mode):
    img1, img2 = random_pair((1, 2, 8, 9), torch.float64, device, seed=5)
    mask = random_mask((1, 1, 8, 9), device, seed=5)
    img1.requires_grad_(True)
    img2.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, b: kssim.masked_ssim(a, b, mask, mode=mode, window_size=3, padding="same"), (img1, img2))


def test_backward_after_another_mask_recomputes(device):
    img1, img2 = random_pair((1, 1, 12, 12), torch.float64, device, seed=6)
    m1, m2 = random_mask(img1.shape, device, seed=1), random_mask(img1.shape, device, seed=2)
    x = img1.clone().requires_grad_(True)
    first = kssim.masked_ssim(x, img2, m1, mode="normalized")
    kssim.masked_ssim(x, img2, m2, mode="normalized")  # same workspace, another mask
    (g,) = torch.autograd.grad(first, (x,))
    _, e1, _ = _reference(img1, img2, m1, mode="normalized")
    assert relative_l2(g.cpu(), e1) < 1e-12


def test_opcheck(device):
    img1, img2 = random_pair((1, 2, 12, 12), torch.float64, device, seed=7)
    mask = random_mask((1, 1, 12, 12), device, seed=7)
    img1.requires_grad_(True)
    options = operand("masked_ssim", window_size=5, normalized=1)
    torch.library.opcheck(torch.ops.kssim.masked_ssim, (img1, img2, mask, options, 1, False))
    grad = torch.ones((), dtype=img1.dtype, device=device)
    torch.library.opcheck(torch.ops.kssim.masked_ssim_backward,
                          (grad, img1.detach(), img2, mask, options, 1, False))


def test_the_module_holds_its_options(device):
    img1, img2 = random_pair((2, 1, 12, 12), torch.float64, device, seed=8)
    mask = random_mask((2, 1, 12, 12), device, seed=8)
    module = kssim.MaskedSSIM(mode="normalized", window_size=5, reduction="none")
    assert torch.equal(module(img1, img2, mask),
                       kssim.masked_ssim(img1, img2, mask, mode="normalized", window_size=5, reduction="none"))


def test_mask_values_outside_0_1_raise_on_cpu_and_give_nan_on_cuda(device):
    """CPU: ValueError before any kernel. CUDA: the device's own check makes the mean NaN, without the host
    waiting for the device."""
    a, b = random_pair((1, 3, 12, 12), torch.float32, device, seed=1)
    for bad in (2.0, float("nan"), -1.0):
        m = random_mask((1, 1, 12, 12), device, seed=1).float() * bad
        if a.device.type == "cpu":
            with pytest.raises(ValueError, match=r"\[0, 1\]"):
                kssim.masked_ssim(a, b, m)
        else:
            assert torch.isnan(kssim.masked_ssim(a, b, m)).item()


@pytest.mark.parametrize("call, error, match", [
    (lambda a, b, m: kssim.masked_ssim(a, b, m, mode="soft"), ValueError, "mode"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m[:, :, :-1]), ValueError, "mask must have shape"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m.expand(1, 2, 12, 12)[:, :, :, :]), ValueError, "mask must have shape"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m * 2), ValueError, r"\[0, 1\]"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m * float("nan")), ValueError, r"\[0, 1\]"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m.clone().requires_grad_(True)), ValueError, "detach"),
    (lambda a, b, m: kssim.masked_ssim(a, b, [1.0]), TypeError, "torch.Tensor"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m.int()), TypeError, "floating-point or bool"),
    (lambda a, b, m: kssim.masked_ssim(a.int(), b.int(), m), TypeError, "float32, float64, float16 or bfloat16"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m, window_size=13), ValueError, "window_size"),
    (lambda a, b, m: kssim.masked_ssim(a, b, m, reduction="sum"), ValueError, "reduction"),
])
def test_bad_input_raises_before_any_kernel(call, error, match):
    a, b = random_pair((1, 3, 12, 12), torch.float32, "cpu", seed=1)
    m = random_mask((1, 1, 12, 12), "cpu", seed=1).float()
    with pytest.raises(error, match=match):
        call(a, b, m)
