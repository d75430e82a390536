# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.ms_ssim and kssim.MS_SSIM: value and both gradients against reference_ssim.ms_ssim (float64 PyTorch
written from the definition), per-image reduction, gradcheck, opcheck and bad input. Small images: 3 scales
of a 3-tap window need extents > 8."""

import pytest
import torch

import kssim
from conftest import operand, random_pair, relative_l2
import reference_ssim as ref

# (value, gradient relative L2) tolerances: MS-SSIM multiplies powers of means over several scales.
TOLERANCE = {torch.float32: (5e-6, 5e-5), torch.float64: (1e-12, 1e-11)}

CASES = [
    ((2, 3, 19, 22), {"window_size": 3, "sigma": 0.8, "weights": (0.2, 0.3, 0.5)}),   # odd and even extents
    ((1, 2, 33, 35), {"window_size": 5, "sigma": 1.0, "weights": (0.5, 0.5, 1.0)}),
    ((1, 1, 10, 11, 12), {"window_size": 3, "sigma": 1.0, "weights": (0.4, 0.6)}),    # volumes
    ((1, 2, 9, 17), {"window_size": 3, "sigma": 1.5, "weights": (0.1, 0.2, 0.7), "data_range": 2.0, "k2": 0.05}),
    # pytorch-msssim's float32 window (raw moments at every scale)
    ((2, 2, 34, 37), {"window_size": 5, "sigma": 1.5, "weights": (0.3, 0.3, 0.4), "window": "float32"}),
    ((1, 2, 11, 12, 13), {"window_size": 3, "sigma": 1.0, "weights": (0.4, 0.6), "window": "float32"}),
]


def _reference(img1, img2, reduction="mean", **options):
    x = img1.detach().cpu().double().requires_grad_(True)
    y = img2.detach().cpu().double().requires_grad_(True)
    value = ref.ms_ssim(x, y, reduction=reduction, **options)
    g1, g2 = torch.autograd.grad(value.sum(), (x, y))
    return value.detach(), g1, g2


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_value_and_both_gradients_match_the_float64_reference(device, dtype, case, reduction):
    shape, options = case
    img1, img2 = random_pair(shape, dtype, device, seed=len(shape) + shape[-1])
    img1.requires_grad_(True)
    img2.requires_grad_(True)
    value = kssim.ms_ssim(img1, img2, reduction=reduction, **options)
    assert value.dtype == dtype and value.shape == (() if reduction == "mean" else (shape[0],))
    g1, g2 = torch.autograd.grad(value.sum(), (img1, img2))
    expected, e1, e2 = _reference(img1, img2, reduction=reduction, **options)
    value_tol, grad_tol = TOLERANCE[dtype]
    assert relative_l2(value.detach().cpu(), expected) < value_tol
    assert relative_l2(g1.cpu(), e1) < grad_tol
    assert relative_l2(g2.cpu(), e2) < grad_tol


def test_the_defaults_match_the_reference_at_the_smallest_size(device):
    img1, img2 = random_pair((1, 2, 161, 163), torch.float64, device, seed=5)
    value = kssim.ms_ssim(img1, img2)
    assert relative_l2(value.cpu(), ref.ms_ssim(img1.cpu(), img2.cpu())) < 1e-12
    with pytest.raises(ValueError, match="160"):
        kssim.ms_ssim(img1[..., :160, :], img2[..., :160, :])


def test_gradcheck_in_float64(device):
    img1, img2 = random_pair((1, 2, 9, 10), torch.float64, device, seed=7)
    img1.requires_grad_(True)
    img2.requires_grad_(True)
    for reduction in ("mean", "none"):
        assert torch.autograd.gradcheck(
            lambda a, b: kssim.ms_ssim(a, b, window_size=3, weights=(0.3, 0.7), reduction=reduction), (img1, img2))


def test_one_gradient_and_no_gradient(device):
    img1, img2 = random_pair((1, 1, 12, 12), torch.float64, device, seed=8)
    options = {"window_size": 3, "weights": (0.3, 0.7)}
    _, e1, e2 = _reference(img1, img2, **options)
    x = img1.clone().requires_grad_(True)
    (g1,) = torch.autograd.grad(kssim.ms_ssim(x, img2, **options), (x,))
    assert relative_l2(g1.cpu(), e1) < 1e-11
    y = img2.clone().requires_grad_(True)
    (g2,) = torch.autograd.grad(kssim.ms_ssim(img1, y, **options), (y,))
    assert relative_l2(g2.cpu(), e2) < 1e-11
    assert not kssim.ms_ssim(img1, img2, **options).requires_grad


def test_identical_images_give_one(device):
    img, _ = random_pair((2, 3, 12, 12), torch.float32, device, seed=9)
    assert torch.allclose(kssim.ms_ssim(img, img, window_size=3, weights=(0.5, 0.5)).cpu(), torch.tensor(1.0))


def test_opcheck(device):
    img1, img2 = random_pair((1, 2, 12, 12), torch.float64, device, seed=10)
    img1.requires_grad_(True)
    options = operand("ms_ssim", window_size=3, weights=[0.3, 0.7])
    for per_image in (False, True):
        torch.library.opcheck(torch.ops.kssim.ms_ssim, (img1, img2, options, 1, per_image))
        grad = torch.ones((img1.shape[0],) if per_image else (), dtype=img1.dtype, device=device)
        torch.library.opcheck(torch.ops.kssim.ms_ssim_backward, (grad, img1.detach(), img2, options, 1, per_image))


def test_the_module_holds_its_options(device):
    img1, img2 = random_pair((2, 1, 12, 12), torch.float64, device, seed=11)
    module = kssim.MS_SSIM(window_size=3, weights=[0.3, 0.7], reduction="none")
    assert torch.equal(module(img1, img2), kssim.ms_ssim(img1, img2, window_size=3, weights=(0.3, 0.7),
                                                           reduction="none"))
    assert "window_size=3" in repr(module)


@pytest.mark.parametrize("call, error, match", [
    (lambda a, b: kssim.ms_ssim(a.int(), b.int()), TypeError, "float32, float64, float16 or bfloat16"),
    (lambda a, b: kssim.ms_ssim(a, b.double()), TypeError, "same dtype"),
    (lambda a, b: kssim.ms_ssim(a, b[..., :-1]), ValueError, "same shape"),
    (lambda a, b: kssim.ms_ssim(a[0], b[0]), ValueError, "4-D"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=3, weights=()), ValueError, "1 to 8"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=3, weights=[0.5, -0.1]), ValueError, ">= 0"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=3, weights=[float("nan")]), ValueError, "finite"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=3, weights="ab"), TypeError, "sequence of numbers"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=4), ValueError, "odd"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=3, window="float16"), ValueError, "window must be"),
    (lambda a, b: kssim.ms_ssim(a, b, reduction="sum"), ValueError, "reduction"),
    (lambda a, b: kssim.ms_ssim(a, b, window_size=3, weights=(1, 1, 1)), ValueError, "needs every spatial extent > 8"),
    (lambda a, b: kssim.ms_ssim(a, [1.0]), TypeError, "torch.Tensor"),
])
def test_bad_input_raises_before_any_kernel(call, error, match):
    a, b = random_pair((1, 1, 8, 20), torch.float32, "cpu", seed=1)
    with pytest.raises(error, match=match):
        call(a, b)
