# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Independent NumPy references in float64 for the kssim CLI tests of --metric ms-ssim and --mask, written
from the definitions (ssim_reference.py's blur): MS-SSIM with pytorch-msssim's conventions, and masked SSIM
in both modes."""
import numpy as np

from ssim_reference import _blur, gaussian_window

MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _constants(k1, k2, data_range):
    return (k1 * data_range) ** 2, (k2 * data_range) ** 2


def _pool(x, dims):
    """2x2 (2x2x2) average over the last `dims` axes, one zero sample before every odd extent."""
    pad = [(0, 0)] * (x.ndim - dims) + [(s % 2, 0) for s in x.shape[x.ndim - dims:]]
    x = np.pad(x, pad)
    for axis in range(x.ndim - dims, x.ndim):
        n = x.shape[axis] // 2
        x = np.take(x, np.arange(0, 2 * n, 2), axis=axis) + np.take(x, np.arange(1, 2 * n, 2), axis=axis)
    return x / 2 ** dims


def ms_ssim_per_channel(a, b, window=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, dims=2,
                        weights=MS_SSIM_WEIGHTS):
    """a, b: (N, C, [D,] H, W); returns MS-SSIM of every (n, c), shape (N, C)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    taps = gaussian_window(window, sigma)
    axes = list(range(a.ndim - dims, a.ndim))
    c1, c2 = _constants(k1, k2, data_range)
    result = np.ones(a.shape[:2])
    for k, w in enumerate(weights):
        blur = lambda x: _blur(x, taps, axes, "valid")  # noqa: E731
        mu1, mu2 = blur(a), blur(b)
        v1, v2, cov = blur(a * a) - mu1 ** 2, blur(b * b) - mu2 ** 2, blur(a * b) - mu1 * mu2
        cs = (2 * cov + c2) / (v1 + v2 + c2)
        term = cs if k + 1 < len(weights) else (2 * mu1 * mu2 + c1) / (mu1 ** 2 + mu2 ** 2 + c1) * cs
        mean = term.reshape(a.shape[0], a.shape[1], -1).mean(axis=2)
        result *= np.maximum(mean, 0) ** w
        a, b = _pool(a, dims), _pool(b, dims)
    return result


def ms_ssim(a, b, **kw):
    return float(ms_ssim_per_channel(a, b, **kw).mean())


def masked_ssim_parts(a, b, mask, mode="weights", window=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0,
                      padding="valid", dims=2):
    """a, b: (N, C, [D,] H, W); mask broadcastable to them. Returns (map, weights): the map (0 for normalized
    windows without a valid pixel) and each map pixel's weight, the mask at its window's centre."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m = np.broadcast_to(np.asarray(mask, dtype=np.float64), a.shape)
    taps = gaussian_window(window, sigma)
    axes = list(range(a.ndim - dims, a.ndim))
    blur = lambda x: _blur(x, taps, axes, padding)  # noqa: E731
    c1, c2 = _constants(k1, k2, data_range)
    if mode == "weights":
        norm = 1.0
        mu1, mu2 = blur(a), blur(b)
        e11, e22, e12 = blur(a * a), blur(b * b), blur(a * b)
    else:
        x, y = np.where(m > 0, a, 0.0), np.where(m > 0, b, 0.0)
        norm = blur(m)
        with np.errstate(divide="ignore", invalid="ignore"):
            mu1, mu2 = blur(m * x) / norm, blur(m * y) / norm
            e11, e22, e12 = blur(m * x * x) / norm, blur(m * y * y) / norm, blur(m * x * y) / norm
    with np.errstate(divide="ignore", invalid="ignore"):
        v1, v2, cov = e11 - mu1 ** 2, e22 - mu2 ** 2, e12 - mu1 * mu2
        ssim_map = (2 * mu1 * mu2 + c1) * (2 * cov + c2) / ((mu1 ** 2 + mu2 ** 2 + c1) * (v1 + v2 + c2))
    if mode != "weights":
        ssim_map = np.where(norm > 0, ssim_map, 0.0)
    r = window // 2 if padding == "valid" else 0
    centre = tuple([slice(None)] * (a.ndim - dims) + [slice(r, r + s) for s in ssim_map.shape[a.ndim - dims:]])
    return ssim_map, m[centre]


def masked_ssim(a, b, mask, **kw):
    ssim_map, w = masked_ssim_parts(a, b, mask, **kw)
    return float((w * ssim_map).sum() / w.sum())
