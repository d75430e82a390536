# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""padding="reflect" and "replicate" (kssim::Padding::Reflect and Replicate): a map of the image's size over
the image extended by its mirror image about the edge pixels (x[-1] = x[1]) or by its edge pixels repeated
(x[-1] = x[0]). kssim.ssim's value and both gradients against reference_ssim.py (F.pad with PyTorch's modes of
those names, then the float64 window where it fits, the mean of the whole map); the other functions and modules
that take a padding; the workspace cache's key; bad input; torchmetrics' SSIM, whose convention "reflect" is,
where torchmetrics is installed."""

import math
import re

import pytest
import torch

import kssim
from conftest import TOLERANCE, operand, random_pair, relative_l2
import reference_ssim as ref

try:
    import torchmetrics
    from torchmetrics.functional.image import structural_similarity_index_measure as torchmetrics_ssim
except ImportError:  # not a dependency: installed on the GPU machine, not on the project's own
    torchmetrics = None

PADDINGS = ("reflect", "replicate")

# (shape, options): odd sizes, extents just above what a mirror image needs (window_size // 2 + 1: 6 for the
# default window, 4 for 7 taps), other windows and constants, the float32 window, volumes.
CASES = [
    ((2, 3, 37, 29), {}),
    ((1, 1, 6, 40), {}),
    ((1, 2, 31, 4), {"window_size": 7, "sigma": 1.1, "k1": 0.02, "k2": 0.05, "data_range": 2.0}),
    ((2, 3, 23, 31), {"window": "float32"}),
    ((2, 2, 12, 13, 14), {"window_size": 5, "sigma": 0.8}),
    ((1, 1, 6, 9, 16), {}),
]
# Replicate has no size rule: images thinner than the window's reach, down to one pixel.
REPLICATE_ONLY = [
    ((2, 1, 3, 19), {}),
    ((1, 2, 1, 17), {"window_size": 5}),
    ((1, 1, 2, 5, 4), {"window_size": 7, "sigma": 1.2}),
]


def _case_id(case):
    return "x".join(map(str, case[0])) + "".join(f"-{k}={v}" for k, v in sorted(case[1].items()))


def _check_value_and_gradients(device, dtype, shape, options, padding, reduction):
    a, b = random_pair(shape, dtype, device, seed=len(shape) * 100 + shape[-1] + shape[-2])
    a.requires_grad_(True)
    b.requires_grad_(True)
    value = kssim.ssim(a, b, padding=padding, reduction=reduction, **options)
    weights = None if reduction == "mean" else torch.linspace(-1.0, 2.0, shape[0], dtype=dtype, device=device)
    value.backward(weights)
    # The reference of the same (rounded) inputs, in float64.
    expected, g1, g2 = ssim_and_gradients_cpu(a, b, reduction, weights, padding=padding, **options)
    value_tol, grad_tol = TOLERANCE[dtype]
    assert value.dtype == dtype and value.shape == (() if reduction == "mean" else (shape[0],))
    assert (value.detach().cpu().double() - expected).abs().max() <= value_tol
    assert relative_l2(a.grad, g1) <= grad_tol
    assert relative_l2(b.grad, g2) <= grad_tol


def ssim_and_gradients_cpu(a, b, reduction, weights, **options):
    return ref.ssim_and_gradients(a.detach().cpu(), b.detach().cpu(), reduction,
                                  weights=None if weights is None else weights.cpu(), **options)


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_value_and_both_gradients_match_the_padded_reference(device, dtype, padding, case, reduction):
    _check_value_and_gradients(device, dtype, *case, padding, reduction)


@pytest.mark.parametrize("case", REPLICATE_ONLY, ids=_case_id)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_replicate_takes_images_thinner_than_the_window(device, dtype, case):
    _check_value_and_gradients(device, dtype, *case, "replicate", "mean")


@pytest.mark.parametrize("padding", PADDINGS)
def test_fused_ssim_and_fused_ssim3d(device, padding):
    value_tol, grad_tol = TOLERANCE[torch.float32]
    for fn, shape in ((kssim.fused_ssim, (2, 3, 24, 33)), (kssim.fused_ssim3d, (1, 2, 9, 13, 14))):
        a, b = random_pair(shape, torch.float32, device, seed=shape[-1])
        a.requires_grad_(True)
        value = fn(a, b, padding=padding)
        value.backward()
        expected, g1, _ = ssim_and_gradients_cpu(a, b, "mean", None, padding=padding, window="float32")
        assert abs(value.item() - expected.item()) <= value_tol
        assert relative_l2(a.grad, g1) <= grad_tol


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("shape", [(2, 2, 17, 23), (1, 2, 9, 10, 11)])
def test_l1_ssim_loss(device, padding, shape):
    a, b = random_pair(shape, torch.float64, device, seed=11)
    a.requires_grad_(True)
    b.requires_grad_(True)
    options = {"window_size": 7, "sigma": 1.3, "padding": padding}
    loss = kssim.l1_ssim_loss(a, b, l1_weight=0.6, **options)
    g1, g2 = torch.autograd.grad(loss, (a, b))
    x = a.detach().cpu().requires_grad_(True)
    y = b.detach().cpu().requires_grad_(True)
    expected = 0.6 * (x - y).abs().mean() + 0.4 * (1 - ref.ssim(x, y, **options))
    e1, e2 = torch.autograd.grad(expected, (x, y))
    value_tol, grad_tol = TOLERANCE[torch.float64]
    assert abs(loss.item() - expected.item()) <= value_tol
    assert relative_l2(g1, e1) <= grad_tol and relative_l2(g2, e2) <= grad_tol
    assert torch.equal(kssim.L1SSIMLoss(l1_weight=0.6, **options)(a, b), loss)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("shape", [(2, 3, 16, 17), (1, 2, 9, 10, 11)])
def test_masked_ssim_with_map_weights(device, padding, shape):
    """MaskMode::Weights: SSIM's map over the padded images, each pixel weighted by the mask at its centre
    (every pixel is a centre: the map has the image's size)."""
    a, b = random_pair(shape, torch.float64, device, seed=12)
    gen = torch.Generator().manual_seed(12)
    mask = torch.rand((shape[0], 1) + shape[2:], generator=gen, dtype=torch.float64).to(device)
    a.requires_grad_(True)
    b.requires_grad_(True)
    options = {"window_size": 5, "padding": padding}
    value = kssim.masked_ssim(a, b, mask, reduction="none", **options)
    g1, g2 = torch.autograd.grad(value.sum(), (a, b))
    x = a.detach().cpu().requires_grad_(True)
    y = b.detach().cpu().requires_grad_(True)
    expected = ref.masked_ssim(x, y, mask.cpu(), reduction="none", **options)
    e1, e2 = torch.autograd.grad(expected.sum(), (x, y))
    value_tol, grad_tol = TOLERANCE[torch.float64]
    assert relative_l2(value, expected) < 10 * value_tol
    assert relative_l2(g1, e1) < 10 * grad_tol and relative_l2(g2, e2) < 10 * grad_tol
    module = kssim.MaskedSSIM(reduction="none", **options)
    assert relative_l2(module(a.detach(), b.detach(), mask), expected) < 10 * value_tol


def test_the_ssim_module_holds_the_padding(device):
    a, b = random_pair((2, 2, 16, 17), torch.float64, device, seed=13)
    for padding in PADDINGS:
        module = kssim.SSIM(padding=padding, reduction="none")
        assert torch.equal(module(a, b), kssim.ssim(a, b, padding=padding, reduction="none"))
        assert f"padding='{padding}'" in repr(module)


def test_each_padding_has_its_own_workspace(device):
    """The cache key holds the padding: the four paddings of one problem give four results, and a backward
    after forwards of the same images with the other paddings is its own padding's gradient."""
    a, b = random_pair((1, 2, 16, 17), torch.float64, device, seed=14)
    values = {p: kssim.ssim(a, b, padding=p).item() for p in ("valid", "same") + PADDINGS}
    for p, v in values.items():
        assert abs(v - ref.ssim(a.cpu(), b.cpu(), padding=p).item()) <= TOLERANCE[torch.float64][0], p
    assert len(set(values.values())) == 4
    x = a.clone().requires_grad_(True)
    results = {p: kssim.ssim(x, b, padding=p) for p in PADDINGS + ("same",)}
    for p, value in results.items():
        (g,) = torch.autograd.grad(value, (x,))
        _, e, _ = ssim_and_gradients_cpu(a, b, "mean", None, padding=p)
        assert relative_l2(g, e) <= TOLERANCE[torch.float64][1], p


@pytest.mark.parametrize("shape,options", [((1, 1, 5, 40), {}), ((1, 1, 40, 5), {}), ((1, 1, 5, 12, 12), {}),
                                           ((1, 1, 12, 12, 5), {}), ((2, 1, 3, 20), {"window_size": 7})],
                         ids=["H", "W", "D", "W3d", "window7"])
def test_reflect_needs_extents_above_half_the_window(device, shape, options):
    """A mirror image reaches window_size // 2 pixels: kssim's ValueError naming the extents; replicate takes
    the same images."""
    a, b = random_pair(shape, torch.float32, device, seed=15)
    extents = re.escape(str(tuple(shape)))
    with pytest.raises(ValueError, match=rf"^kssim: .*reflect.*{extents}"):
        kssim.ssim(a, b, padding="reflect", **options)
    assert math.isfinite(kssim.ssim(a, b, padding="replicate", **options).item())


def test_reflect_size_rule_in_the_other_functions(device):
    a, b = random_pair((1, 1, 5, 40), torch.float32, device, seed=16)
    for call in (lambda: kssim.fused_ssim(a, b, padding="reflect"),
                 lambda: kssim.l1_ssim_loss(a, b, padding="reflect"),
                 lambda: kssim.masked_ssim(a, b, torch.ones_like(a), padding="reflect")):
        with pytest.raises(ValueError, match=r"^kssim: .*reflect"):
            call()


@pytest.mark.parametrize("padding", ["mirror", "Reflect", "REPLICATE", "", None, 2, True])
def test_unknown_padding_names_the_four(padding):
    a, b = random_pair((1, 1, 16, 16), torch.float32, "cpu", seed=17)
    expected = r"^kssim: padding must be 'valid', 'same', 'reflect' or 'replicate', got "
    for call in (lambda: kssim.ssim(a, b, padding=padding), lambda: kssim.fused_ssim(a, b, padding),
                 lambda: kssim.l1_ssim_loss(a, b, padding=padding),
                 lambda: kssim.masked_ssim(a, b, torch.ones_like(a), padding=padding),
                 lambda: kssim.SSIM(padding=padding)(a, b)):
        with pytest.raises(ValueError, match=expected):
            call()


@pytest.mark.parametrize("code", [-1, 4, 2**31 + 1, -2**40])
def test_the_operators_reject_other_padding_codes(code):
    """Direct calls of the operators: kssim::validate's message, for codes beyond an int too."""
    a, b = random_pair((1, 1, 16, 16), torch.float64, "cpu", seed=18)
    mask, grad = torch.ones_like(a), torch.ones((), dtype=torch.float64)
    ops = torch.ops.kssim
    ssim, loss, ms, masked = (operand(m, padding=code, window_size=3, weights=[0.5, 0.5])
                              for m in ("ssim", "l1_ssim_loss", "ms_ssim", "masked_ssim"))
    for call in (lambda: ops.ssim(a, b, ssim, 0, False),
                 lambda: ops.ssim_backward(grad, a, b, ssim, 1, False),
                 lambda: ops.l1_ssim_loss(a, b, loss, 0, False),
                 lambda: ops.l1_ssim_loss_backward(grad, a, b, loss, 1, False),
                 lambda: ops.ms_ssim(a, b, ms, 0, False),
                 lambda: ops.ms_ssim_backward(grad, a, b, ms, 1, False),
                 lambda: ops.masked_ssim(a, b, mask, masked, 0, False),
                 lambda: ops.masked_ssim_backward(grad, a, b, mask, masked, 1, False)):
        with pytest.raises(ValueError, match=r"^kssim: padding must be Padding::Valid, Same, Reflect or Replicate"):
            call()


@pytest.mark.parametrize("padding", PADDINGS)
def test_normalized_masks_take_no_reflect_or_replicate(device, padding):
    """Normalized convolution weighs what it averages by the mask, which has no values outside the image:
    kssim::MaskedSSIM refuses these paddings in that mode (MaskMode::Weights takes them)."""
    a, b = random_pair((1, 2, 16, 16), torch.float32, device, seed=19)
    mask = torch.ones((1, 1, 16, 16), device=device)
    with pytest.raises(ValueError, match="^kssim: "):
        kssim.masked_ssim(a, b, mask, mode="normalized", padding=padding)
    with pytest.raises(ValueError, match="^kssim: "):
        kssim.MaskedSSIM(mode="normalized", padding=padding)(a, b, mask)
    assert math.isfinite(kssim.masked_ssim(a, b, mask, mode="weights", padding=padding).item())


def test_ms_ssim_takes_no_padding():
    """MS-SSIM has valid windows only: its functions and module have no padding keyword, as before."""
    a, b = random_pair((1, 1, 161, 161), torch.float32, "cpu", seed=20)
    for padding in ("reflect", "replicate", "valid"):
        with pytest.raises(TypeError, match="padding"):
            kssim.ms_ssim(a, b, padding=padding)
        with pytest.raises(TypeError, match="padding"):
            kssim.MS_SSIM(padding=padding)


def _version(text):
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _smooth_pair(shape, device):
    """Two smooth images (products of sines: local variances far below random images'), SSIM about 0.94."""
    n, c, h, w = shape
    y = torch.arange(h, dtype=torch.float64)[:, None]
    x = torch.arange(w, dtype=torch.float64)[None, :]
    planes = [0.5 + 0.3 * torch.sin(2 * math.pi * x / 29 + 0.7 * i) * torch.cos(2 * math.pi * y / 23 - 0.7 * i)
              for i in range(n * c)]
    a = torch.stack(planes).reshape(shape)
    b = (a + 0.04 * torch.sin(2 * math.pi * (x + 2 * y) / 17)).clamp(0, 1)
    return a.float().to(device), b.float().to(device)


# torchmetrics before 1.4.2 averaged only the map pixels whose windows lie inside the image (its
# ssim_idx_full_image[..., pad_h:-pad_h, pad_w:-pad_w], removed by its pull request 2721): kssim's "valid".
@pytest.mark.skipif(torchmetrics is None, reason="torchmetrics is not installed")
@pytest.mark.skipif(torchmetrics is not None and _version(torchmetrics.__version__) < (1, 4, 2),
                    reason="torchmetrics < 1.4.2 averages a cropped map")
@pytest.mark.parametrize("pair", ["random", "random_64", "correlated", "smooth"])
def test_reflect_is_torchmetrics_ssim(device, pair):
    """torchmetrics' structural_similarity_index_measure (Gaussian window 11 / 1.5, reflect padding, the mean
    of the whole map): its float32 window built by torch, float32 raw moments and variances clamped at 0 leave
    differences of rounding only (a few 1e-7 measured)."""
    gen = torch.Generator().manual_seed(21)
    if pair == "random":
        a, b = (torch.rand((2, 3, 37, 29), generator=gen).to(device) for _ in range(2))
    elif pair == "random_64":
        a, b = (torch.rand((1, 1, 64, 64), generator=gen).to(device) for _ in range(2))
    elif pair == "correlated":
        a, b = random_pair((3, 1, 40, 52), torch.float32, device, seed=21)
    else:
        a, b = _smooth_pair((2, 3, 64, 64), device)
    expected = torchmetrics_ssim(a, b, data_range=1.0)
    value = kssim.ssim(a, b, padding="reflect", data_range=1.0)
    assert expected.device == value.device
    assert abs(value.item() - expected.item()) <= 2e-6, (value.item(), expected.item())
