# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""pytorch-msssim's front door on kssim's kernels: `from kssim.pytorch_msssim import ssim, ms_ssim, SSIM, MS_SSIM`
instead of `from pytorch_msssim import ...`, with pytorch-msssim 1.0's signatures and defaults
(data_range=255, size_average=True, win_size=11, win_sigma=1.5, K=(0.01, 0.03), ...).

Semantics kept: size-1 spatial axes are squeezed away first (so a (N, C, 1, H, W) volume is an image); SSIM
and MS-SSIM are averaged per channel, then over channels and, with size_average, over images (otherwise one
value per image); `ssim` and `ms_ssim` use pytorch-msssim's float32 window and raw moments (kssim's
window="float32"), and nonnegative_ssim clamps each (image, channel) SSIM at 0 before averaging; MS-SSIM clamps every cs and the last
scale's SSIM at 0, pools with avg_pool's zero padding of odd extents, and needs H and W > (win_size - 1) * 16
(the error is a ValueError that is also an AssertionError, pytorch-msssim raising the latter).

Differences, each an exception rather than another number:
  * `win` (a custom window) is taken only when it is the float32 Gaussian of (win_size, win_sigma) in every
    row (pytorch-msssim's own, e.g. a module's `win`); any other window raises NotImplementedError.
  * An image axis shorter than the window (pytorch-msssim then skips the Gaussian along it, with a warning)
    raises NotImplementedError; so does an MS-SSIM whose coarse scales are shorter than the window on an axis
    (a volume's depth, or more than 5 weights), which pytorch-msssim would blur on the other axes only.
  * Options kssim rejects (even win_size outside [3, 31], K with a negative value, negative weights) raise
    ValueError; ms_ssim takes float32 and float64 images only (TypeError).
Against pytorch-msssim 1.0, both in float64, ssim and ms_ssim agree to rounding (src/python/README.md,
"pytorch-msssim"). Gradients flow to both X and Y.
"""

import torch

from . import functional as _F

__all__ = ["ssim", "ms_ssim", "SSIM", "MS_SSIM"]

MS_SSIM_WEIGHTS = _F.MS_SSIM_WEIGHTS


class MsSsimSizeError(ValueError, AssertionError):
    """An image too small for pytorch-msssim's MS-SSIM (it asserts; `except AssertionError` still catches it)."""


def _float32_gaussian(size, sigma):
    """The float32 1-D Gaussian (each exp in float32, divided by the float32 sum): pytorch-msssim's window."""
    x = torch.arange(size, dtype=torch.float32) - size // 2
    e = torch.exp(-(x * x) / (2 * float(sigma) ** 2))
    return e / e.sum()


def _prepare(X, Y):
    """pytorch-msssim's input rules: same shape, size-1 spatial axes squeezed (last first), then 4-D or 5-D."""
    if not isinstance(X, torch.Tensor) or not isinstance(Y, torch.Tensor):
        raise TypeError(f"kssim: X and Y must be torch.Tensors, got {type(X).__name__} and {type(Y).__name__}")
    if X.shape != Y.shape:
        raise ValueError(f"Input images should have the same dimensions, but got {X.shape} and {Y.shape}.")
    for d in range(X.dim() - 1, 1, -1):
        if X.shape[d] == 1:
            X, Y = X.squeeze(d), Y.squeeze(d)
    if X.dim() not in (4, 5):
        raise ValueError(f"Input images should be 4-d or 5-d tensors, but got {X.shape}")
    return X, Y


def _window_size(win_size, win_sigma, win):
    """The window size, with `win` checked to be the float32 Gaussian of its size and win_sigma."""
    if win is not None:
        if not isinstance(win, torch.Tensor):
            raise TypeError(f"kssim: win must be a torch.Tensor or None, got {type(win).__name__}")
        win_size = win.shape[-1]
    if not (isinstance(win_size, int) and win_size % 2 == 1):
        raise ValueError("Window size should be odd.")
    if win is not None:
        expected = _float32_gaussian(win_size, win_sigma).double()
        rows = win.detach().to("cpu", torch.float64).reshape(-1, win_size)
        if not torch.allclose(rows, expected.expand_as(rows), rtol=1e-6, atol=0):
            raise NotImplementedError(
                "kssim.pytorch_msssim: win must be the Gaussian window of win_size and win_sigma (pytorch-msssim's "
                f"_fspecial_gauss_1d({win_size}, {win_sigma})); kssim's kernels do not take other windows")
    return win_size


def _require_window_fits(shape, win_size, what):
    if any(n < win_size for n in shape[2:]):
        raise NotImplementedError(
            f"kssim.pytorch_msssim: {what}: an axis of {tuple(shape)} is shorter than the window ({win_size}), "
            "where pytorch-msssim skips the Gaussian along it; kssim does not reproduce that")


def _constants(K):
    try:
        k1, k2 = K
    except (TypeError, ValueError):
        raise ValueError(f"kssim.pytorch_msssim: K must be a pair (K1, K2), got {K!r}") from None
    return _F._real("K1", k1), _F._real("K2", k2)  # their values are kssim's to check (ValueError)


def ssim(X, Y, data_range=255, size_average=True, win_size=11, win_sigma=1.5, win=None, K=(0.01, 0.03),
         nonnegative_ssim=False):
    """pytorch-msssim's ssim: SSIM of X and Y, (N, C, H, W) or (N, C, D, H, W), with pytorch-msssim's float32
    window; the mean (size_average) or one value per image. nonnegative_ssim: each (image, channel) SSIM
    clamped at 0 (relu) before averaging."""
    X, Y = _prepare(X, Y)
    win_size = _window_size(win_size, win_sigma, win)
    _require_window_fits(X.shape, win_size, "ssim")
    k1, k2 = _constants(K)
    options = dict(window_size=win_size, sigma=win_sigma, k1=k1, k2=k2, data_range=data_range, window="float32")
    if not nonnegative_ssim:
        return _F.ssim(X, Y, reduction="mean" if size_average else "none", **options)
    n, c = X.shape[:2]
    # Each (image, channel) as an image of its own: a view of the same memory where the layout allows.
    per_channel = _F.ssim(X.reshape(n * c, 1, *X.shape[2:]), Y.reshape(n * c, 1, *Y.shape[2:]), reduction="none",
                          **options)
    per_channel = torch.relu(per_channel.view(n, c))
    return per_channel.mean() if size_average else per_channel.mean(1)


def ms_ssim(X, Y, data_range=255, size_average=True, win_size=11, win_sigma=1.5, win=None, weights=None,
            K=(0.01, 0.03)):
    """pytorch-msssim's ms_ssim: MS-SSIM of X and Y, (N, C, H, W) or (N, C, D, H, W); the mean (size_average)
    or one value per image. weights: one exponent per scale (default 0.0448, 0.2856, 0.3001, 0.2363, 0.1333)."""
    X, Y = _prepare(X, Y)
    win_size = _window_size(win_size, win_sigma, win)
    limit = (win_size - 1) * 2 ** 4
    if min(X.shape[-2:]) <= limit:
        raise MsSsimSizeError(f"Image size should be larger than {limit} due to the 4 downsamplings in ms-ssim "
                              f"(got {tuple(X.shape)})")
    values = _F._ms_ssim_weights(weights)
    smallest = _F.ms_ssim_min_size(win_size, len(values))
    if any(n < smallest for n in X.shape[2:]):
        raise NotImplementedError(
            f"kssim.pytorch_msssim: ms_ssim with {len(values)} scales needs every axis > {smallest - 1} so that the "
            f"window fits the coarsest scale; on {tuple(X.shape)} pytorch-msssim would skip the Gaussian along the "
            "shorter axes there, which kssim does not reproduce")
    k1, k2 = _constants(K)
    return _F.ms_ssim(X, Y, window_size=win_size, sigma=win_sigma, k1=k1, k2=k2, data_range=data_range,
                      weights=values, reduction="mean" if size_average else "none", window="float32")


class _Module(torch.nn.Module):
    def __init__(self, data_range, size_average, win_size, win_sigma, channel, spatial_dims, K):
        super().__init__()
        self.win_size = win_size
        self.win_sigma = win_sigma
        # pytorch-msssim's attribute: the window, one row per channel (the shape of its grouped convolution).
        self.win = _float32_gaussian(win_size, win_sigma).reshape([1] * (spatial_dims + 1) + [win_size]).repeat(
            [channel] + [1] * (spatial_dims + 1))
        self.size_average = size_average
        self.data_range = data_range
        self.K = K
        self.channel = channel
        self.spatial_dims = spatial_dims

    def _check(self, X, Y):
        """pytorch-msssim's modules convolve with a window of `channel` rows and `spatial_dims` axes, so other
        inputs fail there: here with a clear message."""
        X, Y = _prepare(X, Y)
        if X.shape[1] != self.channel or X.dim() - 2 != self.spatial_dims:
            raise ValueError(f"kssim.pytorch_msssim: this module was made for channel={self.channel} and "
                             f"spatial_dims={self.spatial_dims}, got input of shape {tuple(X.shape)}")
        return X, Y


class SSIM(_Module):
    """pytorch-msssim's SSIM module: SSIM(data_range=255, size_average=True, win_size=11, win_sigma=1.5,
    channel=3, spatial_dims=2, K=(0.01, 0.03), nonnegative_ssim=False); forward(X, Y)."""

    def __init__(self, data_range=255, size_average=True, win_size=11, win_sigma=1.5, channel=3, spatial_dims=2,
                 K=(0.01, 0.03), nonnegative_ssim=False):
        super().__init__(data_range, size_average, win_size, win_sigma, channel, spatial_dims, K)
        self.nonnegative_ssim = nonnegative_ssim

    def forward(self, X, Y):
        X, Y = self._check(X, Y)
        return ssim(X, Y, data_range=self.data_range, size_average=self.size_average, win_size=self.win_size,
                    win_sigma=self.win_sigma, K=self.K, nonnegative_ssim=self.nonnegative_ssim)


class MS_SSIM(_Module):
    """pytorch-msssim's MS_SSIM module: MS_SSIM(data_range=255, size_average=True, win_size=11, win_sigma=1.5,
    channel=3, spatial_dims=2, weights=None, K=(0.01, 0.03)); forward(X, Y)."""

    def __init__(self, data_range=255, size_average=True, win_size=11, win_sigma=1.5, channel=3, spatial_dims=2,
                 weights=None, K=(0.01, 0.03)):
        super().__init__(data_range, size_average, win_size, win_sigma, channel, spatial_dims, K)
        self.weights = weights

    def forward(self, X, Y):
        X, Y = self._check(X, Y)
        return ms_ssim(X, Y, data_range=self.data_range, size_average=self.size_average, win_size=self.win_size,
                       win_sigma=self.win_sigma, weights=self.weights, K=self.K)
