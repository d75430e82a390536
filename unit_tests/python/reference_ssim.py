# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""An independent SSIM in plain PyTorch, float64: a Gaussian window applied with conv2d / conv3d (zero
padding for "same"), the SSIM formula on raw moments, autograd for the gradients. It shares nothing with
kssim's kernels (separable passes, recentring, hand-written adjoints)."""

import math

import torch
import torch.nn.functional as F


def gaussian(window_size, sigma, window="exact"):
    """The normalised Gaussian ("exact"), or the float32 window of fused-ssim and pytorch-msssim ("float32",
    kssim.Window::Float32 written from its definition: each exp rounded to float32, their exact sum rounded
    to float32, each weight the float32 quotient), as float64."""
    x = [t - window_size // 2 for t in range(window_size)]
    e = [math.exp(-v * v / (2 * sigma * sigma)) for v in x]
    if window == "float32":
        e32 = torch.tensor(e, dtype=torch.float32)
        total = torch.tensor(math.fsum(e32.double().tolist()), dtype=torch.float32)
        return (e32 / total).double()
    g = torch.tensor(e, dtype=torch.float64)
    return g / g.sum()


def ssim_map(img1, img2, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, padding="valid",
             window="exact"):
    x, y = img1.double(), img2.double()
    channels, dims = x.shape[1], x.dim() - 2
    g = gaussian(window_size, sigma, window).to(x.device)
    window = g[:, None] * g[None, :] if dims == 2 else g[:, None, None] * g[None, :, None] * g[None, None, :]
    window = window.expand(channels, 1, *window.shape).contiguous()
    conv = F.conv2d if dims == 2 else F.conv3d
    pad = window_size // 2 if padding == "same" else 0

    def blur(t):
        return conv(t, window, padding=pad, groups=channels)

    mu1, mu2 = blur(x), blur(y)
    s11 = blur(x * x) - mu1 * mu1
    s22 = blur(y * y) - mu2 * mu2
    s12 = blur(x * y) - mu1 * mu2
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    return (2 * mu1 * mu2 + c1) * (2 * s12 + c2) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))


def ssim(img1, img2, reduction="mean", **options):
    m = ssim_map(img1, img2, **options)
    return m.mean() if reduction == "mean" else m.flatten(1).mean(1)


def ssim_and_gradients(img1, img2, reduction="mean", weights=None, **options):
    """The reference value and d<weights, value>/d img1, d img2 (weights: 1, or one per image)."""
    x = img1.detach().double().requires_grad_(True)
    y = img2.detach().double().requires_grad_(True)
    value = ssim(x, y, reduction, **options)
    upstream = torch.ones_like(value) if weights is None else weights.double()
    g1, g2 = torch.autograd.grad(value, (x, y), upstream)
    return value.detach(), g1, g2
