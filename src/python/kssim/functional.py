# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python API: kssim.ssim, fused_ssim / fused_ssim3d with fused-ssim's signatures, the fused L1 + SSIM
training loss kssim.l1_ssim_loss, kssim.ms_ssim, kssim.masked_ssim and kssim.ssimulacra2.

Bad input raises before any kernel runs: TypeError for non-tensors and unsupported dtypes, ValueError for
shapes, devices and options, RuntimeError for CUDA tensors in a build without CUDA. The rules of the options'
values and of the images' sizes are kssim's (kssim::validate and the C++ objects' constructors): the operators
raise them as ValueError with kssim's message, which names the option by its keyword here. This module checks
only what it translates itself: the string options, the types, the tensors."""

import numbers

import torch

from ._library import HAS_CUDA

# The padding names and the operators' codes for them: kssim::Padding's values (Valid, Same, Reflect,
# Replicate), cast on the C++ side, where kssim::validate rejects any other code.
_PADDINGS = {"valid": 0, "same": 1, "reflect": 2, "replicate": 3}
_REDUCTIONS = ("mean", "none")
_WINDOWS = ("exact", "float32")
_MASK_MODES = ("weights", "normalized")
# MS-SSIM's default exponents per scale, finest first (Wang, Simoncelli and Bovik 2003; pytorch-msssim's).
MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)
_ALL_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
                torch.bfloat16: "bfloat16"}
_RANK_NAMES = {4: "4-D (N, C, H, W)", 5: "5-D (N, C, D, H, W)"}


def _words(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _check_tensor(name, t, ranks, dtypes=_ALL_DTYPES, rank_names=_RANK_NAMES):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"kssim: {name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in dtypes:
        raise TypeError(f"kssim: {name} must be {_words(_DTYPE_NAMES[d] for d in dtypes)}, got {t.dtype}")
    if t.dim() not in ranks:
        raise ValueError(f"kssim: {name} must be {_words(rank_names[r] for r in ranks)}, got shape {tuple(t.shape)}")


def _check_device(name1, t1, name2, t2):
    if t1.device != t2.device:
        raise ValueError(f"kssim: {name1} and {name2} must be on the same device, got {t1.device} and {t2.device}")
    if t1.device.type not in ("cpu", "cuda", "meta"):
        raise ValueError(f"kssim: images must be CPU or CUDA tensors, got {t1.device}")
    if t1.device.type == "cuda" and not HAS_CUDA:
        raise RuntimeError("kssim: this kssim was built without CUDA, so it cannot compute on CUDA tensors: move "
                           "them to the CPU, or rebuild kssim against a Kokkos with its CUDA backend")


def _check_images(img1, img2, ranks, dtypes=_ALL_DTYPES):
    _check_tensor("img1", img1, ranks, dtypes)
    _check_tensor("img2", img2, ranks, dtypes)
    if img1.device != img2.device:
        raise ValueError(f"kssim: img1 and img2 must be on the same device, got {img1.device} and {img2.device}")
    if img1.dtype != img2.dtype:
        raise TypeError(f"kssim: img1 and img2 must have the same dtype, got {img1.dtype} and {img2.dtype}")
    if img1.shape != img2.shape:
        raise ValueError(f"kssim: img1 and img2 must have the same shape, got {tuple(img1.shape)} and "
                         f"{tuple(img2.shape)}")
    _check_device("img1", img1, "img2", img2)


def _real(name, value):
    """An option that crosses into the operator as a float: a real number (int, float, numpy scalar, or a
    one-element tensor), else TypeError. Its value is kssim's to check (kssim::validate, raised as ValueError
    with kssim's message by the operator)."""
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, (numbers.Real, torch.Tensor)):
        raise TypeError(f"kssim: {name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):  # a tensor of several elements or a complex one
        raise TypeError(f"kssim: {name} must be a real number, got {value!r}") from None


def _options(window_size, sigma, k1, k2, data_range, padding, window, windows=_WINDOWS):
    """The SSIM options as the operators' options operand takes them, by name (a dict for _operand; each
    metric adds its own). Only what cannot cross is checked here (the string options and the types); the
    rules of the values and of the images' sizes are kssim's (kssim::validate), checked by the operator:
    ValueError with kssim's message."""
    if not isinstance(padding, str) or padding not in _PADDINGS:
        raise ValueError(f"kssim: padding must be {_words(repr(p) for p in _PADDINGS)}, got {padding!r}")
    if window not in windows:
        raise ValueError(f"kssim: window must be {_words(repr(w) for w in windows)}, got {window!r}")
    if isinstance(window_size, bool) or not isinstance(window_size, int):
        raise ValueError(f"kssim: window_size must be an int, got {window_size!r}")
    return {"window_size": window_size, "sigma": _real("sigma", sigma), "k1": _real("k1", k1), "k2": _real("k2", k2),
            "data_range": _real("data_range", data_range), "padding": _PADDINGS[padding],
            "float32_window": window == "float32"}


# Each metric's option names in its operators' operand order, which the C++ operators define (TorchOps.cpp);
# a list value (MS-SSIM's weights, the last) is the rest of the operand.
_OPTION_NAMES = {metric: tuple(torch.ops.kssim._option_names(metric))
                 for metric in ("ssim", "l1_ssim_loss", "ms_ssim", "masked_ssim")}


def _operand(metric, options):
    """The options operand of `metric`'s operators (a list of numbers) from `options`, a dict by name."""
    operand = []
    for name in _OPTION_NAMES[metric]:
        value = options[name]
        if type(value) is list:
            operand += value
        else:
            operand.append(value)
    return operand


def _gradients(img1, img2):
    """Which gradients a backward pass will want (bit 0: img1, bit 1: img2), so that the forward pass
    prepares exactly those and the backward pass reuses its work."""
    if not torch.is_grad_enabled():
        return 0
    return (1 if img1.requires_grad else 0) | (2 if img2.requires_grad else 0)


def _ssim(img1, img2, window_size, sigma, k1, k2, data_range, padding, per_image, train, ranks, window):
    _check_images(img1, img2, ranks)
    options = _operand("ssim", _options(window_size, sigma, k1, k2, data_range, padding, window))
    return torch.ops.kssim.ssim(img1, img2, options, _gradients(img1, img2) if train else 0, per_image)


def ssim(img1, img2, *, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, padding="valid",
         reduction="mean", window="exact"):
    """SSIM of two batches of images (N, C, H, W) or volumes (N, C, D, H, W), float32, float64, float16 or
    bfloat16, on CPU or CUDA, differentiable with respect to both.

    window_size, sigma: the Gaussian window (odd size, at most 31); k1, k2, data_range: C1 = (k1 L)^2,
    C2 = (k2 L)^2; padding: "valid" (the map where the window fits), or a map the size of the image with
    "same" (zero padding), "reflect" (the image mirrored about its edge pixels, which are not repeated: PyTorch's
    "reflect", torchmetrics' SSIM; every spatial extent must exceed window_size // 2) or "replicate" (the edge
    pixels repeated: MATLAB's ssim); reduction: "mean" (a 0-dim tensor) or "none" (the mean of each image, shape (N,));
    window: "exact" (the normalised Gaussian, statistics of recentred data) or "float32" (the float32 weights
    and raw moments of fused-ssim and pytorch-msssim, whose window sums to 1 - 3.1e-8: their numbers to
    rounding, where "exact" differs from them by ~2e-7 on uncorrelated images).
    The result has the images' dtype (the mean is accumulated in float64). float16 and bfloat16 images are
    read as they are stored and computed in float32; the result and the gradients are rounded to their dtype
    (a gradient once, after the multiplication by the upstream gradient: loss scaling keeps float16
    gradients out of the subnormal range).
    """
    _check_reduction(reduction)
    return _ssim(img1, img2, window_size, sigma, k1, k2, data_range, padding, reduction == "none", True, (4, 5),
                 window)


def fused_ssim(img1, img2, padding="same", train=True, *, window="float32"):
    """fused-ssim's fused_ssim: the mean SSIM of (N, C, H, W) images with an 11x11 window, sigma 1.5,
    C1 = 0.01^2, C2 = 0.03^2, zero ("same", the default) or "valid" padding (also kssim.ssim's "reflect" and
    "replicate").

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
    (N, C, H, W) or volumes (N, C, D, H, W), float32, float64, float16 or bfloat16 (computed in float32 as
    kssim.ssim's), on CPU or CUDA; differentiable with respect to both (d|x - y|/dx = sign(x - y), with sign(0) = 0 as in PyTorch). Defaults: 3DGS's weight 0.8 and
    zero ("same") padding; the SSIM options, padding among them, are kssim.ssim's (window="float32":
    fused-ssim's window, as in 3DGS's loss with fused-ssim). Returns a 0-dim tensor in the images' dtype.
    """
    _check_images(img1, img2, (4, 5))
    options = _options(window_size, sigma, k1, k2, data_range, padding, window)
    if isinstance(l1_weight, bool) or not isinstance(l1_weight, (int, float)):  # its range is kssim's to check
        raise ValueError(f"kssim: l1_weight must be a number in [0, 1], got {l1_weight!r}")
    options["l1_weight"] = float(l1_weight)
    return torch.ops.kssim.l1_ssim_loss(img1, img2, _operand("l1_ssim_loss", options), _gradients(img1, img2),
                                        False)


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"kssim: reduction must be 'mean' or 'none', got {reduction!r}")


def _ms_ssim_weights(weights):
    """The exponents as a list of floats (TypeError if they are not numbers); their number (1 to 8) and values
    (finite, >= 0) are kssim's to check (ValueError from the operator)."""
    if weights is None:
        return list(MS_SSIM_WEIGHTS)
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().cpu().double().flatten().tolist()
    if isinstance(weights, (str, bytes)):
        raise TypeError(f"kssim: weights must be a sequence of numbers, got {weights!r}")
    try:
        return [float(w) for w in weights]
    except (TypeError, ValueError):
        raise TypeError(f"kssim: weights must be a sequence of numbers, got {weights!r}") from None


def ms_ssim_min_size(window_size=11, scales=5):
    """The smallest spatial extent MS-SSIM takes: (window_size - 1) * 2^(scales - 1) + 1 (161 by default)."""
    return (window_size - 1) * 2 ** (scales - 1) + 1


def ms_ssim(img1, img2, *, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0, weights=None,
            reduction="mean", window="exact"):
    """MS-SSIM (multi-scale SSIM, Wang, Simoncelli and Bovik 2003) of two batches of images (N, C, H, W) or
    volumes (N, C, D, H, W), float32, float64, float16 or bfloat16 (every scale computed in float32, the
    gradients rounded once to the images' dtype), on CPU or CUDA, differentiable with respect to both.

    With S = len(weights) scales (default 5, weights 0.0448, 0.2856, 0.3001, 0.2363, 0.1333): scale 1 is the
    image, scale k+1 the 2x2 (volumes 2x2x2) average pool of scale k (odd extents zero-padded, as
    avg_pool2d(kernel_size=2, padding=extent % 2)); per (image, channel)
        MS-SSIM = prod_{k<S} max(cs_k, 0)^w_k * max(ssim_S, 0)^w_S
    with cs_k the mean contrast-structure term (2 cov + C2) / (var1 + var2 + C2) of scale k and ssim_S the mean
    SSIM of the last scale, over valid windows of the Gaussian window (window="exact": normalised, in double;
    "float32": pytorch-msssim's float32 weights and the raw moments of every scale, as kssim.ssim's); the result
    is averaged over channels, then over images ("mean", a 0-dim tensor) or not ("none", shape (N,)). The
    clamp's gradient is 0 where it clamps. Every spatial extent must exceed (window_size - 1) * 2^(S - 1) (160
    by default).
    """
    _check_reduction(reduction)
    _check_images(img1, img2, (4, 5))
    options = _options(window_size, sigma, k1, k2, data_range, "valid", window)
    options["weights"] = _ms_ssim_weights(weights)
    return torch.ops.kssim.ms_ssim(img1, img2, _operand("ms_ssim", options), _gradients(img1, img2),
                                   reduction == "none")


def _checked_mask(mask, img1):
    """The mask as the kernels take it: a tensor of the images' dtype and device, (N, 1 or C, [D,] H, W),
    values in [0, 1]: checked here on CPU tensors (ValueError). On CUDA tensors a check would make the host wait
    for the device (tens of us, and no CUDA graph capture): there kssim's own check on the device gives the mean
    NaN instead (kssim/impl/masked/MaskCheck.hpp), as it does under torch.compile."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"kssim: mask must be a torch.Tensor, got {type(mask).__name__}")
    if mask.dtype.is_complex or not (mask.dtype.is_floating_point or mask.dtype == torch.bool):
        raise TypeError(f"kssim: mask must be a floating-point or bool tensor, got {mask.dtype}")
    if mask.device != img1.device:
        raise ValueError(f"kssim: mask must be on the images' device {img1.device}, got {mask.device}")
    shape, want = tuple(mask.shape), tuple(img1.shape)
    if len(shape) != len(want) or shape[1] not in (1, want[1]) or shape[:1] + shape[2:] != want[:1] + want[2:]:
        one = want[:1] + (1,) + want[2:]
        raise ValueError(f"kssim: mask must have shape {want} or {one}, got {shape}")
    if mask.requires_grad and torch.is_grad_enabled():
        raise ValueError("kssim: masked_ssim has no gradient with respect to the mask; pass mask.detach()")
    if mask.dtype != img1.dtype:
        mask = mask.to(img1.dtype)
    if mask.device.type == "cpu" and not torch.compiler.is_compiling():
        if not bool(((mask >= 0) & (mask <= 1)).all()):
            raise ValueError("kssim: mask values must be in [0, 1] (NaN is not allowed)")
    return mask


def masked_ssim(img1, img2, mask, *, mode="weights", window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0,
                padding="valid", reduction="mean"):
    """Masked SSIM of two batches of images (N, C, H, W) or volumes (N, C, D, H, W), float32, float64, float16 or
    bfloat16 (computed in float32 as kssim.ssim's), on CPU or CUDA, differentiable with respect to both images
    (not the mask).

    mask: (N, C, [D,] H, W) or (N, 1, [D,] H, W) (one weight per pixel for every channel), values in [0, 1],
    any floating-point dtype or bool (converted to the images' dtype). Each map pixel p weighs w_p, the mask
    at the centre of its window, and the result is sum_p w_p map_p / sum_p w_p over the batch ("mean") or over
    each image ("none", shape (N,)). mode="weights": the map is SSIM's own (pixels of weight 0 still enter
    their neighbours' windows); mode="normalized": normalized convolution (mu = B(m x) / B(m), E[x^2] =
    B(m x^2) / B(m), E[xy] = B(m x y) / B(m), B the Gaussian window), so pixels of weight 0 never enter any
    window. A total weight of 0 gives NaN (with gradients 0). The other options are kssim.ssim's (the exact
    window only; mode="normalized" takes "valid" or "same" padding, kssim's ValueError for the others). A mask
    value outside [0, 1] is a ValueError on CPU tensors; on CUDA tensors and under torch.compile it gives NaN
    (a check would make the host wait for the device).
    """
    _check_reduction(reduction)
    if mode not in _MASK_MODES:
        raise ValueError(f"kssim: mode must be 'weights' or 'normalized', got {mode!r}")
    _check_images(img1, img2, (4, 5))
    options = _options(window_size, sigma, k1, k2, data_range, padding, "exact", ("exact",))
    options["normalized"] = mode == "normalized"
    operand = _operand("masked_ssim", options)
    mask = _checked_mask(mask, img1)

    def one(x, y, m):
        return torch.ops.kssim.masked_ssim(x, y, m, operand, _gradients(x, y), False)

    if reduction == "mean" or img1.shape[0] == 0:  # an empty batch: kssim's error, from one call of the whole
        return one(img1, img2, mask)
    # Per image: each image's own weighted mean (the batch's mean weighs images by their total weight).
    return torch.stack([one(img1[n:n + 1], img2[n:n + 1], mask[n:n + 1]) for n in range(img1.shape[0])])


_S2_RANKS = {3: "3-D (3, H, W)", 4: "4-D (N, 3, H, W)"}


def ssimulacra2(reference, distorted):
    """SSIMULACRA2 (Cloudinary / libjxl's perceptual metric, libjxl's tool's numbers: 100 = identical, 90
    visually lossless, 70 high, 50 medium, 30 low quality) of sRGB images in [0, 1], shape (3, H, W) or
    (N, 3, H, W), at least 8 x 8, float32 (float64, float16 and bfloat16 are converted to float32), on CPU or
    CUDA.

    reference (3, H, W) or (1, 3, H, W): every distorted image is scored against it, and its preparation
    (XYB pyramid, blurred statistics) is computed once per batch and kept for the next call while the same
    reference tensor comes back unchanged. reference (N, 3, H, W) with N > 1: pairs, distorted[n] against
    reference[n]. Returns one score per distorted image, shape (N,) (0-dim for a (3, H, W) distorted image),
    in the distorted images' dtype.

    Not differentiable: the result never requires grad (no gradient flows to either input). Values outside
    [0, 1], NaN or infinity raise ValueError.
    """
    _check_tensor("reference", reference, (3, 4), _ALL_DTYPES, _S2_RANKS)
    _check_tensor("distorted", distorted, (3, 4), _ALL_DTYPES, _S2_RANKS)
    _check_device("reference", reference, "distorted", distorted)
    ref = reference.detach().unsqueeze(0) if reference.dim() == 3 else reference.detach()
    dist = distorted.detach().unsqueeze(0) if distorted.dim() == 3 else distorted.detach()
    if ref.shape[1] != 3 or dist.shape[1] != 3:
        raise ValueError(f"kssim: ssimulacra2 needs RGB images with 3 channels, got reference {tuple(reference.shape)} "
                         f"and distorted {tuple(distorted.shape)}")
    if ref.shape[2:] != dist.shape[2:]:
        raise ValueError(f"kssim: ssimulacra2: reference and distorted must have the same height and width, got "
                         f"{tuple(reference.shape)} and {tuple(distorted.shape)}")
    if ref.shape[0] not in (1, dist.shape[0]):
        raise ValueError(f"kssim: ssimulacra2: reference must be one image, or one per distorted image, got "
                         f"{ref.shape[0]} references for {dist.shape[0]} distorted images")
    if min(ref.shape[2:]) < 8:
        raise ValueError(f"kssim: ssimulacra2 needs images of at least 8 x 8 pixels (as libjxl's tool), got "
                         f"{tuple(reference.shape)}")
    ref, dist = ref.float(), dist.float()
    if ref.shape[0] == 1:
        scores = torch.ops.kssim.ssimulacra2(ref, dist)
    else:
        scores = torch.cat([torch.ops.kssim.ssimulacra2(ref[n:n + 1], dist[n:n + 1]) for n in range(ref.shape[0])])
    scores = scores.to(distorted.dtype)
    return scores[0] if distorted.dim() == 3 else scores
