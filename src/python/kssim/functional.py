# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python API: kssim.ssim, fused_ssim / fused_ssim3d with fused-ssim's signatures, and the fused L1 + SSIM
training loss kssim.l1_ssim_loss.

Bad input raises before any kernel runs: TypeError for non-tensors and unsupported dtypes, ValueError for
shapes, devices and options, RuntimeError for CUDA tensors in a build without CUDA."""

import torch

from ._library import HAS_CUDA

_PADDINGS = ("valid", "same")
_REDUCTIONS = ("mean", "none")
_WINDOWS = ("exact", "float32")
MAX_WINDOW_SIZE = 31  # kssim::max_window_size


def _check_images(img1, img2, ranks):
    for name, img in (("img1", img1), ("img2", img2)):
        if not isinstance(img, torch.Tensor):
            raise TypeError(f"kssim: {name} must be a torch.Tensor, got {type(img).__name__}")
        if img.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            raise TypeError(f"kssim: {name} must be float32, float64, float16 or bfloat16, got {img.dtype}")
        if img.dim() not in ranks:
            wanted = " or ".join({4: "4-D (N, C, H, W)", 5: "5-D (N, C, D, H, W)"}[r] for r in ranks)
            raise ValueError(f"kssim: {name} must be {wanted}, got shape {tuple(img.shape)}")
    if img1.device != img2.device:
        raise ValueError(f"kssim: img1 and img2 must be on the same device, got {img1.device} and {img2.device}")
    if img1.dtype != img2.dtype:
        raise TypeError(f"kssim: img1 and img2 must have the same dtype, got {img1.dtype} and {img2.dtype}")
    if img1.shape != img2.shape:
        raise ValueError(f"kssim: img1 and img2 must have the same shape, got {tuple(img1.shape)} and "
                         f"{tuple(img2.shape)}")
    if img1.device.type not in ("cpu", "cuda", "meta"):
        raise ValueError(f"kssim: images must be CPU or CUDA tensors, got {img1.device}")
    if img1.device.type == "cuda" and not HAS_CUDA:
        raise RuntimeError("kssim: this kssim was built without CUDA, so it cannot compute on CUDA tensors: move "
                           "them to the CPU, or rebuild kssim against a Kokkos with its CUDA backend")


def _check_options(shape, window_size, sigma, k1, k2, data_range, padding, window):
    if padding not in _PADDINGS:
        raise ValueError(f"kssim: padding must be 'valid' or 'same', got {padding!r}")
    if window not in _WINDOWS:
        raise ValueError(f"kssim: window must be 'exact' or 'float32', got {window!r}")
    if not (isinstance(window_size, int) and 3 <= window_size <= MAX_WINDOW_SIZE and window_size % 2 == 1):
        raise ValueError(f"kssim: window_size must be an odd int in [3, {MAX_WINDOW_SIZE}], got {window_size!r}")
    if not sigma > 0:
        raise ValueError(f"kssim: sigma must be > 0, got {sigma!r}")
    if not data_range > 0:
        raise ValueError(f"kssim: data_range must be > 0, got {data_range!r}")
    if not (k1 >= 0 and k2 >= 0) or (k1 == 0 and k2 == 0):
        raise ValueError(f"kssim: k1 and k2 must be >= 0 and not both 0, got {k1!r} and {k2!r}")
    if any(n == 0 for n in shape):
        raise ValueError(f"kssim: images must not be empty, got shape {tuple(shape)}")
    if padding == "valid" and any(n < window_size for n in shape[2:]):
        raise ValueError(f"kssim: with padding='valid' every spatial size must be >= window_size {window_size}, "
                         f"got shape {tuple(shape)}")


def _gradients(img1, img2):
    """Which gradients a backward pass will want (bit 0: img1, bit 1: img2), so that the forward pass
    prepares exactly those and the backward pass reuses its work."""
    if not torch.is_grad_enabled():
        return 0
    return (1 if img1.requires_grad else 0) | (2 if img2.requires_grad else 0)


def _ssim(img1, img2, window_size, sigma, k1, k2, data_range, padding, per_image, train, ranks, window):
    _check_images(img1, img2, ranks)
    _check_options(img1.shape, window_size, sigma, k1, k2, data_range, padding, window)
    return torch.ops.kssim.ssim(img1, img2, window_size, float(sigma), float(k1), float(k2), float(data_range),
                                padding == "same", per_image, _gradients(img1, img2) if train else 0,
                                window == "float32")


def ssim(img1, img2, *, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, padding="valid",
         reduction="mean", window="exact"):
    """SSIM of two batches of images (N, C, H, W) or volumes (N, C, D, H, W), float32, float64, float16 or
    bfloat16, on CPU or CUDA, differentiable with respect to both.

    window_size, sigma: the Gaussian window (odd size, at most 31); k1, k2, data_range: C1 = (k1 L)^2,
    C2 = (k2 L)^2; padding: "valid" (the map where the window fits) or "same" (zero padding, map the size
    of the image); reduction: "mean" (a 0-dim tensor) or "none" (the mean of each image, shape (N,));
    window: "exact" (the normalised Gaussian, statistics of recentred data) or "float32" (the float32 weights
    and raw moments of fused-ssim and pytorch-msssim, whose window sums to 1 - 3.1e-8: their numbers to
    rounding, where "exact" differs from them by ~2e-7 on uncorrelated images).
    The result has the images' dtype (the mean is accumulated in float64). float16 and bfloat16 images are
    read as they are stored and computed in float32; the result and the gradients are rounded to their dtype
    (a gradient once, after the multiplication by the upstream gradient: loss scaling keeps float16
    gradients out of the subnormal range).
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"kssim: reduction must be 'mean' or 'none', got {reduction!r}")
    return _ssim(img1, img2, window_size, sigma, k1, k2, data_range, padding, reduction == "none", True, (4, 5),
                 window)


def fused_ssim(img1, img2, padding="same", train=True, *, window="float32"):
    """fused-ssim's fused_ssim: the mean SSIM of (N, C, H, W) images with an 11x11 window, sigma 1.5,
    C1 = 0.01^2, C2 = 0.03^2, zero ("same", the default) or "valid" padding.

    A drop-in: by default it uses fused-ssim's own float32 window and raw moments (window="float32"), so it
    gives fused-ssim's numbers to rounding and passes the tests written for it; window="exact" is kssim.ssim's
    normalised window. train=False computes the forward pass only (no partial derivatives are kept for a
    backward pass; one would still be correct, by recomputing them). Unlike fused-ssim, img2 gets a gradient
    too when it requires one, and inputs of any strides are read in place.
    """
    return _ssim(img1, img2, 11, 1.5, 0.01, 0.03, 1.0, padding, False, train, (4,), window)


def fused_ssim3d(img1, img2, padding="same", train=True, *, window="float32"):
    """fused-ssim's fused_ssim3d: fused_ssim for volumes (N, C, D, H, W)."""
    return _ssim(img1, img2, 11, 1.5, 0.01, 0.03, 1.0, padding, False, train, (5,), window)


def l1_ssim_loss(img1, img2, *, l1_weight=0.8, padding="same", window_size=11, sigma=1.5, k1=0.01, k2=0.03,
                 data_range=1.0, window="exact"):
    """The 3D Gaussian Splatting training loss in one fused operator:

        l1_weight * (img1 - img2).abs().mean() + (1 - l1_weight) * (1 - ssim(img1, img2))

    with the L1 term computed inside kssim's SSIM kernels (no pass of its own over the images). Images
    (N, C, H, W) or volumes (N, C, D, H, W), float32 or float64, on CPU or CUDA; differentiable with respect
    to both (d|x - y|/dx = sign(x - y), with sign(0) = 0 as in PyTorch). Defaults: 3DGS's weight 0.8 and
    zero ("same") padding; the SSIM options are kssim.ssim's (window="float32": fused-ssim's window, as in
    3DGS's loss with fused-ssim). Returns a 0-dim tensor in the images' dtype.
    """
    _check_images(img1, img2, (4, 5))
    if img1.dtype not in (torch.float32, torch.float64):  # the fused loss has no 16-bit kernels
        raise TypeError(f"kssim: l1_ssim_loss takes float32 or float64 images, got {img1.dtype}")
    _check_options(img1.shape, window_size, sigma, k1, k2, data_range, padding, window)
    if isinstance(l1_weight, bool) or not isinstance(l1_weight, (int, float)) or not 0 <= l1_weight <= 1:
        raise ValueError(f"kssim: l1_weight must be a number in [0, 1], got {l1_weight!r}")
    return torch.ops.kssim.l1_ssim_loss(img1, img2, float(l1_weight), window_size, float(sigma), float(k1),
                                        float(k2), float(data_range), padding == "same", _gradients(img1, img2),
                                        window == "float32")
