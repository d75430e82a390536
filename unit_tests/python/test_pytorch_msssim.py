# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.pytorch_msssim, pytorch-msssim's front door: its defaults (data_range=255, size_average), its float32
window (reference_ssim.py's window="float32"), per-channel nonnegative_ssim, the squeeze of size-1 axes, the
modules' channel and spatial_dims, MS-SSIM against reference_ssim.ms_ssim (written from the definition), and
the arguments kssim cannot reproduce raising instead of giving another number. pytorch-msssim's own tests
run against it by hand (src/python/README.md, "Tests")."""

import pytest
import torch

from conftest import random_pair, relative_l2
import reference_ssim as ref
from kssim.pytorch_msssim import MS_SSIM, SSIM, ms_ssim, ssim


def pair255(shape, device, seed, dtype=torch.float64):
    a, b = random_pair(shape, dtype, device, seed)
    return a * 255, b * 255


def reference_ssim_per_channel(x, y, **options):
    return ref.ssim_map(x, y, window="float32", **options).flatten(2).mean(-1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_ssim_defaults_are_pytorch_msssims(device, dtype):
    x, y = pair255((2, 3, 20, 23), device, 1, dtype)
    expected = reference_ssim_per_channel(x, y, data_range=255)
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    assert relative_l2(ssim(x, y).cpu(), expected.mean()) < tol
    assert relative_l2(ssim(x, y, size_average=False).cpu(), expected.mean(1)) < tol
    assert relative_l2(SSIM(channel=3)(x, y).cpu(), expected.mean()) < tol


def test_ssim_options_and_gradients(device):
    x, y = random_pair((1, 2, 15, 16), torch.float64, device, 2)
    x.requires_grad_(True)
    y.requires_grad_(True)
    value = ssim(x, y, data_range=1.0, win_size=7, win_sigma=1.2, K=[0.02, 0.04])
    g1, g2 = torch.autograd.grad(value, (x, y))
    xr, yr = x.detach().cpu().requires_grad_(True), y.detach().cpu().requires_grad_(True)
    expected = reference_ssim_per_channel(xr, yr, window_size=7, sigma=1.2, k1=0.02, k2=0.04).mean()
    e1, e2 = torch.autograd.grad(expected, (xr, yr))
    assert relative_l2(value.detach().cpu(), expected.detach()) < 1e-13
    assert relative_l2(g1.cpu(), e1) < 1e-12 and relative_l2(g2.cpu(), e2) < 1e-12


def test_nonnegative_ssim_clamps_each_channel(device):
    x, _ = random_pair((2, 3, 14, 14), torch.float64, device, 3)
    y = x.clone()
    y[:, 1] = 1 - x[:, 1]  # an anticorrelated channel: negative SSIM
    per_channel = reference_ssim_per_channel(x, y, data_range=1.0)
    assert (per_channel[:, 1] < 0).all()
    for size_average in (True, False):
        got = ssim(x, y, data_range=1.0, size_average=size_average, nonnegative_ssim=True)
        clamped = per_channel.clamp_min(0)
        assert relative_l2(got.cpu(), clamped.mean() if size_average else clamped.mean(1)) < 1e-13
    assert relative_l2(ssim(x, y, data_range=1.0).cpu(), per_channel.mean()) < 1e-13


def test_size_one_axes_are_squeezed(device):
    x, y = pair255((1, 3, 16, 17), device, 4)
    assert torch.equal(ssim(x.unsqueeze(2), y.unsqueeze(2)), ssim(x, y))
    with pytest.raises(ValueError, match="4-d or 5-d"):
        ssim(x[..., :1], y[..., :1])


def test_volumes_and_a_thin_volume(device):
    x, y = pair255((1, 2, 11, 12, 13), device, 5)
    expected = reference_ssim_per_channel(x, y, data_range=255).mean()
    assert relative_l2(ssim(x, y).cpu(), expected) < 1e-13
    assert relative_l2(SSIM(channel=2, spatial_dims=3)(x, y).cpu(), expected) < 1e-13


def test_its_own_window_is_taken_and_others_are_refused(device):
    x, y = pair255((1, 3, 16, 16), device, 6)
    module = SSIM(win_size=7, win_sigma=1.0)
    assert module.win.shape == (3, 1, 1, 7)
    assert torch.equal(ssim(x, y, win=module.win, win_sigma=1.0), ssim(x, y, win_size=7, win_sigma=1.0))
    with pytest.raises(NotImplementedError, match="win"):
        ssim(x, y, win=module.win)  # made for sigma 1.0, called with the default 1.5
    with pytest.raises(NotImplementedError, match="win"):
        ssim(x, y, win=torch.ones(3, 1, 1, 7) / 7, win_sigma=1.0)
    with pytest.raises(ValueError, match="odd"):
        ssim(x, y, win_size=8)


def test_axes_shorter_than_the_window_are_refused(device):
    x, y = pair255((1, 3, 10, 16), device, 7)
    with pytest.raises(NotImplementedError, match="shorter than the window"):
        ssim(x, y)


def test_modules_check_channel_and_spatial_dims(device):
    x, y = pair255((1, 1, 16, 16), device, 8)
    with pytest.raises(ValueError, match="channel=3"):
        SSIM()(x, y)
    with pytest.raises(ValueError, match="spatial_dims=3"):
        SSIM(channel=1, spatial_dims=3)(x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_ms_ssim_matches_the_definition(device, dtype):
    x, y = pair255((2, 2, 166, 171), device, 9, dtype)
    x.requires_grad_(True)
    # pytorch-msssim's window: float32 weights, raw moments at every scale.
    expected = ref.ms_ssim(x.detach().cpu(), y.cpu(), data_range=255, reduction="none", window="float32")
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    value = ms_ssim(x, y, size_average=False)
    assert relative_l2(value.detach().cpu(), expected) < tol
    assert relative_l2(MS_SSIM(channel=2)(x, y).detach().cpu(), expected.mean()) < tol
    # The exact window is another number, further than the tolerance: the window is the float32 one.
    exact = ref.ms_ssim(x.detach().cpu(), y.cpu(), data_range=255, reduction="none")
    assert relative_l2(exact, expected) > 1e3 * 1e-12
    (g,) = torch.autograd.grad(value.sum(), (x,))
    assert torch.isfinite(g).all()


def test_ms_ssim_weights_and_window(device):
    x, y = pair255((1, 1, 97, 100), device, 10)
    weights = [0.2, 0.3, 0.5]
    expected = ref.ms_ssim(x.cpu(), y.cpu(), weights=weights, window_size=5, sigma=1.0, data_range=255,
                           window="float32")
    assert relative_l2(ms_ssim(x, y, win_size=5, win_sigma=1.0, weights=weights).cpu(), expected) < 1e-12


def test_ms_ssim_size_rules(device):
    x, y = pair255((1, 1, 160, 170), device, 11)
    with pytest.raises(AssertionError, match="larger than 160"):
        ms_ssim(x, y)
    with pytest.raises(ValueError, match="larger than 160"):
        ms_ssim(x, y)
    x, y = pair255((1, 1, 4, 170, 170), device, 12)
    with pytest.raises(NotImplementedError, match="shorter axes"):
        ms_ssim(x, y)  # pytorch-msssim would leave the depth unblurred
    x, y = pair255((1, 1, 171, 171), device, 13)
    with pytest.raises(NotImplementedError, match="6 scales"):
        ms_ssim(x, y, weights=[0.1, 0.1, 0.2, 0.2, 0.2, 0.2])
