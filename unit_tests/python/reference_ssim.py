# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""An independent SSIM in plain PyTorch, float64: a Gaussian window applied with conv2d / conv3d (zero
padding for "same"; "reflect" and "replicate" pad the images with F.pad's modes of those names first), the
SSIM formula on raw moments, autograd for the gradients. It shares nothing with kssim's kernels (separable
passes, recentring, hand-written adjoints, gradients folded back from outside the image)."""

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


def blur_of(like, window_size=11, sigma=1.5, padding="valid", window="exact"):
    """B: the Gaussian window applied to each channel of a tensor shaped like `like` (conv2d / conv3d). With
    "reflect" or "replicate" each spatial axis is first extended by window_size // 2 on both sides by F.pad's
    mode of that name (reflect: x[-1] = x[1]; replicate: x[-1] = x[0]); the window is then applied where it
    fits, so the map has the image's size."""
    channels, dims = like.shape[1], like.dim() - 2
    g = gaussian(window_size, sigma, window).to(like.device)
    w = g[:, None] * g[None, :] if dims == 2 else g[:, None, None] * g[None, :, None] * g[None, None, :]
    w = w.expand(channels, 1, *w.shape).contiguous()
    conv = F.conv2d if dims == 2 else F.conv3d
    if padding in ("reflect", "replicate"):
        extend = (window_size // 2,) * (2 * dims)
        return lambda t: conv(F.pad(t, extend, mode=padding), w, groups=channels)
    pad = window_size // 2 if padding == "same" else 0
    return lambda t: conv(t, w, padding=pad, groups=channels)


def ssim_terms(img1, img2, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, padding="valid",
               window="exact"):
    """The luminance map (2 mu1 mu2 + C1) / (mu1^2 + mu2^2 + C1) and the contrast-structure map
    (2 cov + C2) / (var1 + var2 + C2): SSIM's map is their product."""
    x, y = img1.double(), img2.double()
    blur = blur_of(x, window_size, sigma, padding, window)
    mu1, mu2 = blur(x), blur(y)
    s11 = blur(x * x) - mu1 * mu1
    s22 = blur(y * y) - mu2 * mu2
    s12 = blur(x * y) - mu1 * mu2
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    return (2 * mu1 * mu2 + c1) / (mu1 * mu1 + mu2 * mu2 + c1), (2 * s12 + c2) / (s11 + s22 + c2)


def ssim_map(img1, img2, **options):
    luminance, cs = ssim_terms(img1, img2, **options)
    return luminance * cs


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


MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def average_pool(x):
    """The MS-SSIM downsampling: 2x2 (volumes 2x2x2) means, with one zero sample before every odd extent (an
    extent n becomes (n + n % 2) / 2; the divisor is 4 (8), padding included)."""
    pads = []
    for n in reversed(x.shape[2:]):
        pads += [n % 2, 0]
    x = F.pad(x, pads)
    for axis in range(2, x.dim()):
        x = x.unflatten(axis, (x.shape[axis] // 2, 2)).sum(axis + 1)
    return x / 2 ** (x.dim() - 2)


def ms_ssim(img1, img2, weights=MS_SSIM_WEIGHTS, reduction="mean", **options):
    """MS-SSIM from its definition (README, "Other metrics"): per (image, channel) the product over scales of
    max(cs_k, 0)^w_k, the last scale's factor max(ssim_S, 0)^w_S, each scale the average pool of the one
    before; averaged over channels, then images ("mean") or not ("none")."""
    x, y = img1.double(), img2.double()
    per_slice = 1
    for k, w in enumerate(weights):
        luminance, cs = ssim_terms(x, y, **options)
        last = k == len(weights) - 1
        term = (luminance * cs if last else cs).flatten(2).mean(-1)
        per_slice = per_slice * term.clamp_min(0) ** w
        if not last:
            x, y = average_pool(x), average_pool(y)
    return per_slice.mean() if reduction == "mean" else per_slice.mean(1)


def masked_ssim(img1, img2, mask, mode="weights", reduction="mean", window_size=11, sigma=1.5, k1=0.01, k2=0.03,
                data_range=1.0, padding="valid"):
    """Masked SSIM from its definition (README, "Other metrics"): sum_p w_p map_p / sum_p w_p, w_p the mask at
    the centre of map pixel p's window. mode "weights": SSIM's map; "normalized": normalized convolution,
    mu = B(m x) / B(m), E[x^2] = B(m x^2) / B(m), E[xy] = B(m x y) / B(m), a map value 0 where B(m) = 0."""
    x, y = img1.double(), img2.double()
    m = mask.double().expand_as(x)
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    if mode == "weights":
        value = ssim_map(x, y, window_size=window_size, sigma=sigma, k1=k1, k2=k2, data_range=data_range,
                         padding=padding)
    else:
        blur = blur_of(x, window_size, sigma, padding)
        bm = blur(m)
        has = bm > 0
        safe = torch.where(has, bm, torch.ones_like(bm))
        mu1, mu2 = blur(m * x) / safe, blur(m * y) / safe
        s11 = blur(m * x * x) / safe - mu1 * mu1
        s22 = blur(m * y * y) / safe - mu2 * mu2
        s12 = blur(m * x * y) / safe - mu1 * mu2
        value = (2 * mu1 * mu2 + c1) * (2 * s12 + c2) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))
        value = torch.where(has, value, torch.zeros_like(value))
    if padding == "valid":
        r = window_size // 2
        m = m[(slice(None), slice(None)) + tuple(slice(r, n - r) for n in m.shape[2:])]
    if reduction == "mean":
        return (m * value).sum() / m.sum()
    return (m * value).flatten(1).sum(1) / m.flatten(1).sum(1)
