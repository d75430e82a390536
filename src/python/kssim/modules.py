# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""torch.nn.Module wrappers of the functions: each holds its options (the constructor's keyword arguments are
the function's) and its forward() calls the function. No parameters or buffers: kssim's workspaces are cached
by the operators, per shape and options."""

import torch

from . import functional as F


class _Options(torch.nn.Module):
    """Keeps keyword options, passes them to a function, and shows them in repr()."""

    def __init__(self, **options):
        super().__init__()
        self.options = options

    def extra_repr(self):
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items())


class SSIM(_Options):
    """kssim.ssim as a module: SSIM(window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0,
    padding="valid", reduction="mean", window="exact"); forward(img1, img2)."""

    def __init__(self, *, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, padding="valid",
                 reduction="mean", window="exact"):
        super().__init__(window_size=window_size, sigma=sigma, k1=k1, k2=k2, data_range=data_range, padding=padding,
                         reduction=reduction, window=window)

    def forward(self, img1, img2):
        return F.ssim(img1, img2, **self.options)


class MS_SSIM(_Options):
    """kssim.ms_ssim as a module: MS_SSIM(window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0,
    weights=None, reduction="mean", window="exact"); forward(img1, img2)."""

    def __init__(self, *, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, weights=None,
                 reduction="mean", window="exact"):
        super().__init__(window_size=window_size, sigma=sigma, k1=k1, k2=k2, data_range=data_range,
                         weights=None if weights is None else tuple(F._ms_ssim_weights(weights)),
                         reduction=reduction, window=window)

    def forward(self, img1, img2):
        return F.ms_ssim(img1, img2, **self.options)


class MaskedSSIM(_Options):
    """kssim.masked_ssim as a module: MaskedSSIM(mode="weights", window_size=11, sigma=1.5, k1=0.01, k2=0.03,
    data_range=1.0, padding="valid", reduction="mean"); forward(img1, img2, mask)."""

    def __init__(self, *, mode="weights", window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0,
                 padding="valid", reduction="mean"):
        super().__init__(mode=mode, window_size=window_size, sigma=sigma, k1=k1, k2=k2, data_range=data_range,
                         padding=padding, reduction=reduction)

    def forward(self, img1, img2, mask):
        return F.masked_ssim(img1, img2, mask, **self.options)


class L1SSIMLoss(_Options):
    """kssim.l1_ssim_loss as a module (the 3D Gaussian Splatting loss, l1_weight * L1 + (1 - l1_weight) *
    (1 - SSIM), fused): L1SSIMLoss(l1_weight=0.8, padding="same", window_size=11, sigma=1.5, k1=0.01, k2=0.03,
    data_range=1.0, window="exact"); forward(img1, img2)."""

    def __init__(self, *, l1_weight=0.8, padding="same", window_size=11, sigma=1.5, k1=0.01, k2=0.03,
                 data_range=1.0, window="exact"):
        super().__init__(l1_weight=l1_weight, padding=padding, window_size=window_size, sigma=sigma, k1=k1, k2=k2,
                         data_range=data_range, window=window)

    def forward(self, img1, img2):
        return F.l1_ssim_loss(img1, img2, **self.options)
