# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""An independent NumPy SSIM in float64 for the kssim CLI tests: Gaussian window, valid, zero ("same"),
"reflect" (np.pad's reflect: x[-1] = x[1]) or "replicate" (np.pad's edge: x[-1] = x[0]) padding, over the
last 2 (images) or 3 (volumes) axes of (N, C, [D,] H, W) arrays."""
import numpy as np


def gaussian_window(size, sigma):
    t = np.arange(size) - size // 2
    w = np.exp(-t * t / (2.0 * sigma * sigma))
    return w / w.sum()


_PAD_MODES = {"same": "constant", "reflect": "reflect", "replicate": "edge"}


def _blur(x, taps, axes, padding):
    r = len(taps) // 2
    for axis in axes:
        if padding != "valid":
            pad = [(0, 0)] * x.ndim
            pad[axis] = (r, r)
            x = np.pad(x, pad, mode=_PAD_MODES[padding])
        n_out = x.shape[axis] - len(taps) + 1
        acc = np.zeros(x.shape[:axis] + (n_out,) + x.shape[axis + 1 :])
        for k, w in enumerate(taps):
            sl = [slice(None)] * x.ndim
            sl[axis] = slice(k, k + n_out)
            acc += w * x[tuple(sl)]
        x = acc
    return x


def ssim_map(a, b, window=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, padding="valid", dims=2):
    """a, b: (N, C, H, W) for dims 2 or (N, C, D, H, W) for dims 3."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    taps = gaussian_window(window, sigma)
    axes = list(range(a.ndim - dims, a.ndim))
    blur = lambda x: _blur(x, taps, axes, padding)  # noqa: E731
    mu1, mu2 = blur(a), blur(b)
    s11 = blur(a * a) - mu1 * mu1
    s22 = blur(b * b) - mu2 * mu2
    s12 = blur(a * b) - mu1 * mu2
    c1 = (k1 * data_range) ** 2
    c2 = (k2 * data_range) ** 2
    return ((2 * mu1 * mu2 + c1) * (2 * s12 + c2)) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))


def ssim(a, b, **kw):
    return float(ssim_map(a, b, **kw).mean())
