# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""float16 and bfloat16 tensors (every metric but SSIMULACRA2): read as stored, computed in float32, the value and
the gradients rounded to the tensors' dtype (like PyTorch's own operators). Against reference_ssim.py evaluated in float64 on the very
16-bit values kssim reads: the value within float's 1e-6 plus its rounding to the dtype; each gradient element
within the float bar (1e-5 of the largest element) plus half a spacing of the dtype at its value."""

import math

import pytest
import torch

import kssim
from conftest import random_pair
import reference_ssim
from reference_ssim import ssim_and_gradients

DTYPES = [torch.float16, torch.bfloat16]
CASES = [((2, 3, 23, 31), {}), ((1, 2, 17, 20), {"padding": "same"}), ((1, 2, 12, 13, 14), {"window_size": 5})]


def half_spacing(values, dtype):
    """Half the distance between consecutive values of `dtype` around each of `values` (float64)."""
    info = torch.finfo(dtype)
    mantissa = {torch.float16: 10, torch.bfloat16: 7}[dtype]
    magnitude = values.abs().clamp(min=info.tiny)  # below the smallest normal: the subnormals' spacing
    return torch.exp2(torch.floor(torch.log2(magnitude)) - mantissa - 1)


def within_rounding(got, want, dtype, float_bar):
    bound = float_bar + half_spacing(want.abs() + float_bar, dtype)
    return float(((got.double() - want).abs() / bound).max())


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])) + str(sorted(c[1].items())))
@pytest.mark.parametrize("dtype", DTYPES, ids=["float16", "bfloat16"])
def test_16bit_value_and_gradients_match_the_reference_on_rounded_inputs(device, dtype, case):
    shape, options = case
    a, b = random_pair(shape, dtype, device, seed=7 + shape[-1])
    a.requires_grad_(True)
    b.requires_grad_(True)
    value = kssim.ssim(a, b, **options)
    scale = 256.0  # an upstream factor, as loss scaling gives: applied before the rounding
    (scale * value).backward()
    expected, g1, g2 = ssim_and_gradients(a.detach().cpu().double(), b.detach().cpu().double(), **options)
    assert value.dtype == dtype and a.grad.dtype == dtype and b.grad.dtype == dtype
    assert within_rounding(value.detach().cpu(), expected, dtype, 1e-6) <= 1
    largest = float(torch.cat([g1.flatten(), g2.flatten()]).abs().max()) * scale
    assert within_rounding(a.grad.cpu(), scale * g1, dtype, 1e-5 * largest) <= 1
    assert within_rounding(b.grad.cpu(), scale * g2, dtype, 1e-5 * largest) <= 1
    # The test can fail: the reference on the unrounded float64 images differs by more than the bar.
    exact = ssim_and_gradients(*random_pair(shape, torch.float64, "cpu", seed=7 + shape[-1]), **options)[0]
    assert abs(float(exact) - float(expected)) > 1e-6


@pytest.mark.parametrize("dtype", DTYPES, ids=["float16", "bfloat16"])
def test_16bit_identical_images_give_exactly_one(device, dtype):
    a, _ = random_pair((1, 3, 20, 24), dtype, device, seed=11)
    assert kssim.ssim(a, a).item() == 1.0
    assert kssim.fused_ssim(a, a).item() == 1.0


@pytest.mark.parametrize("dtype", DTYPES, ids=["float16", "bfloat16"])
def test_16bit_per_image_values(device, dtype):
    a, b = random_pair((3, 2, 16, 18), dtype, device, seed=12)
    per_image = kssim.ssim(a, b, reduction="none")
    expected = ssim_and_gradients(a.cpu().double(), b.cpu().double(), "none")[0]
    assert per_image.dtype == dtype and per_image.shape == (3,)
    assert within_rounding(per_image.cpu(), expected, dtype, 1e-6) <= 1
    assert math.isclose(kssim.ssim(a, b).item(), float(expected.mean()), abs_tol=1e-6 + 2 ** -9)


@pytest.mark.parametrize("mode", ["weights", "normalized"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float16", "bfloat16"])
def test_16bit_masked_ssim_matches_the_reference_on_rounded_inputs(device, dtype, mode):
    """kssim.masked_ssim of 16-bit images and a mask given in float32 (converted to the images' dtype, as its
    values are rounded to it), both reductions, against reference_ssim.masked_ssim on the rounded values."""
    a, b = random_pair((2, 3, 19, 22), dtype, device, seed=21)
    gen = torch.Generator().manual_seed(22)
    mask = torch.rand((2, 1, 19, 22), generator=gen)
    mask = torch.where(mask < 0.25, torch.zeros_like(mask), mask).to(device)
    rounded_mask = mask.to(dtype).cpu().double()
    for reduction in ("mean", "none"):
        x = a.detach().clone().requires_grad_(True)
        y = b.detach().clone().requires_grad_(True)
        value = kssim.masked_ssim(x, y, mask, mode=mode, reduction=reduction, padding="same")
        assert value.dtype == dtype
        (256.0 * value.sum()).backward()
        rx = a.detach().cpu().double().requires_grad_(True)
        ry = b.detach().cpu().double().requires_grad_(True)
        expected = reference_ssim.masked_ssim(rx, ry, rounded_mask, mode=mode, reduction=reduction, padding="same")
        g1, g2 = torch.autograd.grad(256.0 * expected.sum(), (rx, ry))
        assert within_rounding(value.detach().cpu(), expected.detach(), dtype, 1e-6) <= 1
        largest = float(torch.cat([g1.flatten(), g2.flatten()]).abs().max())
        assert x.grad.dtype == dtype
        assert within_rounding(x.grad.cpu(), g1, dtype, 1e-5 * largest) <= 1
        assert within_rounding(y.grad.cpu(), g2, dtype, 1e-5 * largest) <= 1


@pytest.mark.parametrize("dtype", DTYPES, ids=["float16", "bfloat16"])
def test_16bit_l1_ssim_loss_and_ms_ssim_match_the_reference_on_rounded_inputs(device, dtype):
    """kssim.l1_ssim_loss (image and volume) and kssim.ms_ssim (both reductions) of 16-bit tensors against the
    float64 references on the rounded values: value and both gradients, an upstream factor before the rounding.
    MS-SSIM's gradients at its float bar (1e-4 relative: test_ms_ssim.py)."""
    def fused_loss(x, y, **options):
        return 0.8 * (x - y).abs().mean() + 0.2 * (1 - reference_ssim.ssim(x, y, padding="same", **options))

    cases = [
        (kssim.l1_ssim_loss, fused_loss, (2, 3, 23, 31), {}, "mean", 1e-5),
        (kssim.l1_ssim_loss, fused_loss, (1, 2, 9, 10, 11), {"window_size": 5}, "mean", 1e-5),
        (kssim.ms_ssim, reference_ssim.ms_ssim, (2, 2, 27, 30), {"window_size": 5, "weights": (0.4, 0.6)}, "mean",
         1e-4),
        (kssim.ms_ssim, reference_ssim.ms_ssim, (2, 2, 27, 30), {"window_size": 5, "weights": (0.4, 0.6)}, "none",
         1e-4),
    ]
    for metric, reference, shape, options, reduction, gradient_bar in cases:
        a, b = random_pair(shape, dtype, device, seed=31 + shape[-1])
        x = a.detach().clone().requires_grad_(True)
        y = b.detach().clone().requires_grad_(True)
        extra = {} if metric is kssim.l1_ssim_loss else {"reduction": reduction}
        value = metric(x, y, **options, **extra)
        assert value.dtype == dtype
        (256.0 * value.sum()).backward()
        rx = a.detach().cpu().double().requires_grad_(True)
        ry = b.detach().cpu().double().requires_grad_(True)
        expected = reference(rx, ry, **options, **extra)
        g1, g2 = torch.autograd.grad(256.0 * expected.sum(), (rx, ry))
        assert within_rounding(value.detach().cpu(), expected.detach(), dtype, 1e-6) <= 1, metric.__name__
        largest = float(torch.cat([g1.flatten(), g2.flatten()]).abs().max())
        assert x.grad.dtype == dtype and y.grad.dtype == dtype
        assert within_rounding(x.grad.cpu(), g1, dtype, gradient_bar * largest) <= 1, metric.__name__
        assert within_rounding(y.grad.cpu(), g2, dtype, gradient_bar * largest) <= 1, metric.__name__
