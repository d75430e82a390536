# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The checks of fused-ssim's and pytorch-msssim's own test suites, reproduced against kssim (their code is
not vendored: these are the facts they check, written anew).

fused-ssim 0ac916a, tests/test.py: for random images in [0, 1), fused_ssim(same) must be torch.isclose to
the 3D Gaussian Splatting loss's conv2d SSIM (float32, a window from float32 weights), fused_ssim(valid)
isclose to pytorch_msssim.SSIM, and img1's gradients elementwise isclose to theirs (default rtol 1e-5, atol
1e-8). Its images are 5x5x1080x1920; a gradient of a mean is ~1/numel, so at the smaller sizes here the
gradients are scaled by numel / (5*5*1080*1920) before that elementwise check, to hold it to the same
strength. tests/test_3D.py: the same for 2x1x96^3 float64 volumes with allclose(rtol 1e-6, atol 1e-8).

pytorch-msssim b057b07: tests_comparisons_skimage.py checks ssim(win 11, data_range 255) against scikit-image's
structural_similarity (gaussian weights, sigma 1.5, no sample covariance) within 5e-4 for noise 0..100 on a
photograph, per image and batched (size_average=False); tests_comparisons_2d3d.py checks that a volume of 11
copies of an image has the image's SSIM; tests_loss.py maximises SSIM with Adam from noise to 0.9999.

kssim.fused_ssim defaults to window="float32" (kssim::Window::Float32), which is what makes the first set pass:
with the exact window the means differ by ~2e-7 (test_exact_window_is_why_the_option_exists).
"""

import math

import pytest
import torch
import torch.nn.functional as F

import kssim

THEIR_NUMEL_2D = 5 * 5 * 1080 * 1920


def conv_ssim_3dgs(img1, img2, dims=2):
    """The 3D Gaussian Splatting / fused-ssim test reference: a window of float32 weights (exp rounded to
    float32, divided by their float32 sum), conv with zero padding ("same"), raw moments, in img1's dtype."""
    e = torch.tensor([math.exp(-(x - 5) ** 2 / (2 * 1.5 ** 2)) for x in range(11)], dtype=torch.float32)
    g = (e / e.sum()).to(img1.device, img1.dtype)
    window = g[:, None] * g[None, :] if dims == 2 else g[:, None, None] * g[None, :, None] * g[None, None, :]
    channels = img1.shape[1]
    window = window.expand(channels, 1, *window.shape).contiguous()
    conv = F.conv2d if dims == 2 else F.conv3d

    def blur(t):
        return conv(t, window, padding=5, groups=channels)

    mu1, mu2 = blur(img1), blur(img2)
    s11, s22, s12 = blur(img1 * img1) - mu1 * mu1, blur(img2 * img2) - mu2 * mu2, blur(img1 * img2) - mu1 * mu2
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    return ((2 * mu1 * mu2 + c1) * (2 * s12 + c2) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))).mean()


def pytorch_msssim_ssim(img1, img2, data_range=1.0, per_image=False):
    """pytorch-msssim's ssim(): a 1D window of torch.exp in float32 normalised by its float32 sum, applied
    separably along every spatial axis with valid padding, raw moments, the map's mean (per image: the mean
    over channels of each channel's mean)."""
    coords = torch.arange(11, dtype=torch.float32) - 5
    g = torch.exp(-(coords ** 2) / (2 * 1.5 ** 2))
    g = (g / g.sum()).to(img1.device, img1.dtype)
    channels, dims = img1.shape[1], img1.dim() - 2
    conv = F.conv2d if dims == 2 else F.conv3d

    def blur(t):
        for axis in range(dims):
            shape = [1] * dims
            shape[axis] = 11
            t = conv(t, g.reshape(1, 1, *shape).expand(channels, 1, *shape), groups=channels)
        return t

    mu1, mu2 = blur(img1), blur(img2)
    s11, s22, s12 = blur(img1 * img1) - mu1 * mu1, blur(img2 * img2) - mu2 * mu2, blur(img1 * img2) - mu1 * mu2
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    m = (2 * mu1 * mu2 + c1) * (2 * s12 + c2) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))
    per_channel = m.flatten(2).mean(-1)
    return per_channel.mean(1) if per_image else per_channel.mean()


def _grad_of(fn, img1, img2):
    x = img1.detach().clone().requires_grad_(True)
    value = fn(x, img2)
    value.backward()
    return value.detach(), x.grad


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fused_ssim_test_py_checks(device, seed):
    torch.manual_seed(seed)
    shape = (2, 3, 192, 256)  # borders (zero padding) raise the same-padding SSIM less than at smaller sizes
    img1 = torch.rand(shape, device=device)
    img2 = torch.rand(shape, device=device)
    scale = img1.numel() / THEIR_NUMEL_2D  # gradients to the magnitude of theirs (module docstring)

    og, og_grad = _grad_of(conv_ssim_3dgs, img1, img2)
    same, same_grad = _grad_of(lambda x, y: kssim.fused_ssim(x, y), img1, img2)
    valid, valid_grad = _grad_of(lambda x, y: kssim.fused_ssim(x, y, "valid"), img1, img2)
    pm, pm_grad = _grad_of(pytorch_msssim_ssim, img1, img2)

    assert torch.isclose(og, same)
    assert torch.isclose(valid, pm)
    assert torch.isclose(og_grad * scale, same_grad * scale).all()
    assert torch.isclose(valid_grad * scale, pm_grad * scale).all()


def test_fused_ssim_test_3d_py_checks(device):
    torch.manual_seed(3)
    shape = (2, 1, 24, 26, 28)
    img1 = torch.rand(shape, device=device, dtype=torch.float64)
    img2 = torch.rand(shape, device=device, dtype=torch.float64)
    scale = img1.numel() / (2 * 96 ** 3)

    og, og_grad = _grad_of(lambda x, y: conv_ssim_3dgs(x, y, dims=3), img1, img2)
    pm, pm_grad = _grad_of(pytorch_msssim_ssim, img1, img2)
    same, same_grad = _grad_of(lambda x, y: kssim.fused_ssim3d(x.float(), y.float()).double(), img1, img2)
    valid, valid_grad = _grad_of(lambda x, y: kssim.fused_ssim3d(x.float(), y.float(), "valid").double(), img1, img2)

    assert torch.allclose(og, same, rtol=1e-6, atol=1e-8)
    assert torch.allclose(valid, pm, rtol=1e-6, atol=1e-8)
    assert torch.allclose(og_grad * scale, same_grad * scale, rtol=1e-6, atol=1e-8)
    assert torch.allclose(valid_grad * scale, pm_grad * scale, rtol=1e-6, atol=1e-8)


def test_exact_window_is_why_the_option_exists(device):
    """With kssim's exact window the same check fails: the peers' window sums to 1 - 3.1e-8, which moves
    the SSIM of uncorrelated images by ~2e-7, past isclose's rtol (the test above can fail)."""
    torch.manual_seed(0)
    img1 = torch.rand((2, 3, 192, 256), device=device)
    img2 = torch.rand((2, 3, 192, 256), device=device)
    pm = pytorch_msssim_ssim(img1, img2)
    exact = kssim.fused_ssim(img1, img2, "valid", window="exact")
    assert not torch.isclose(pm, exact)
    assert 5e-8 < abs(float(pm) - float(exact)) < 1e-6
    assert torch.isclose(pm, kssim.fused_ssim(img1, img2, "valid"))


def _photograph():
    skimage_data = pytest.importorskip("skimage.data")
    return torch.from_numpy(skimage_data.astronaut()[::2, ::2].astype("float32"))  # (256, 256, 3)


@pytest.mark.parametrize("noise_level", [0, 10, 30, 60, 100])
def test_pytorch_msssim_skimage_comparison(device, noise_level):
    metrics = pytest.importorskip("skimage.metrics")
    img = _photograph()
    gen = torch.Generator().manual_seed(noise_level)
    noisy = (img + noise_level * torch.rand(img.shape, generator=gen)).clamp(0, 255)
    want = metrics.structural_similarity(img.numpy(), noisy.numpy(), win_size=11, sigma=1.5, data_range=255,
                                         channel_axis=2, use_sample_covariance=False, gaussian_weights=True)
    a = noisy.permute(2, 0, 1)[None].to(device)
    b = img.permute(2, 0, 1)[None].to(device)
    got = kssim.ssim(a, b, data_range=255, window="float32")
    assert abs(float(got) - want) <= 5e-4
    # batched, size_average=False: each image's own value
    batch = kssim.ssim(torch.cat([a, b]), torch.cat([b, b]), data_range=255, window="float32", reduction="none")
    assert abs(float(batch[0]) - want) <= 5e-4 and abs(float(batch[1]) - 1) <= 5e-4


def test_pytorch_msssim_2d_3d_comparison(device):
    img = _photograph()[:96, :96]
    noisy = (img + 30 * torch.rand(img.shape, generator=torch.Generator().manual_seed(1))).clamp(0, 255)
    a2, b2 = noisy.permute(2, 0, 1)[None].to(device), img.permute(2, 0, 1)[None].to(device)
    a3, b3 = a2[:, :, None].expand(-1, -1, 11, -1, -1), b2[:, :, None].expand(-1, -1, 11, -1, -1)
    s2 = kssim.ssim(a2, b2, data_range=255, window="float32")
    s3 = kssim.ssim(a3, b3, data_range=255, window="float32")
    assert abs(float(s2) - float(s3)) <= 1e-4
    assert abs(float(s2) - float(pytorch_msssim_ssim(a2, b2, data_range=255))) <= 1e-5
    assert abs(float(s3) - float(pytorch_msssim_ssim(a3.contiguous(), b3.contiguous(), data_range=255))) <= 1e-5


def test_pytorch_msssim_loss_maximises_ssim(device):
    """tests_loss.py: Adam (lr 0.01) on a noise image, loss 1 - SSIM against a photograph, until SSIM >= 0.9999."""
    target = (_photograph()[:64, :64].mean(-1) / 255)[None, None].to(device)
    x = torch.rand(target.shape, generator=torch.Generator().manual_seed(2)).to(device).requires_grad_(True)
    optimizer = torch.optim.Adam([x], lr=0.01)
    value = 0.0
    for _ in range(3000):
        optimizer.zero_grad()
        loss = 1 - kssim.ssim(target, x, window="float32")
        loss.backward()
        optimizer.step()
        value = 1 - loss.item()
        if value >= 0.9999:
            break
    assert value >= 0.9999
