# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fake kernels of torch.ops.kssim (the operators and their autograd formulas are C++:
src/python/csrc/TorchOps.cpp, SsimAutograd.cpp). They give torch.compile and torch.library.opcheck the
outputs' metadata without computing, so they must allocate exactly as the C++ kernels do. Every metric's
operators take (img1, img2[, mask], options, gradients, per_image); the options operand only selects the
kernels, so the fakes do not read it. What the C++ kernels refuse from the arguments the fakes see (per_image
of a metric without per-image results) the fakes refuse with the same error."""

import torch


# The metrics whose operators have per-image results (TorchOps.cpp's metric_layouts).
_PER_IMAGE = ("ssim", "ms_ssim")


def _check_per_image(metric, per_image):
    if per_image and metric not in _PER_IMAGE:
        raise ValueError(f"kssim: {metric} has no per-image result (per_image must be False)")


def _result_fake(metric, img1, per_image):
    """Every forward operator: the mean (0-dim), or with per_image one value per image, in the images' dtype."""
    _check_per_image(metric, per_image)
    if per_image:
        return img1.new_empty((img1.shape[0],))
    return img1.new_empty(())


def _image_gradients_fake(metric, img1, img2, gradients, per_image):
    """Every backward operator returns the gradients that the bits of `gradients` ask for, else empty tensors."""
    _check_per_image(metric, per_image)
    grad1 = torch.empty_like(img1) if gradients & 1 else img1.new_empty((0,))
    grad2 = torch.empty_like(img2) if gradients & 2 else img2.new_empty((0,))
    return grad1, grad2


def _register(metric):
    @torch.library.register_fake(f"kssim::{metric}")
    def _forward_fake(img1, img2, options, gradients, per_image):
        return _result_fake(metric, img1, per_image)

    @torch.library.register_fake(f"kssim::{metric}_backward")
    def _backward_fake(grad, img1, img2, options, gradients, per_image):
        return _image_gradients_fake(metric, img1, img2, gradients, per_image)


for _metric in ("ssim", "l1_ssim_loss", "ms_ssim"):
    _register(_metric)
del _metric


@torch.library.register_fake("kssim::masked_ssim")
def _masked_ssim_fake(img1, img2, mask, options, gradients, per_image):
    return _result_fake("masked_ssim", img1, per_image)


@torch.library.register_fake("kssim::masked_ssim_backward")
def _masked_ssim_backward_fake(grad, img1, img2, mask, options, gradients, per_image):
    return _image_gradients_fake("masked_ssim", img1, img2, gradients, per_image)


@torch.library.register_fake("kssim::ssimulacra2")
def _ssimulacra2_fake(reference, distorted):
    return distorted.new_empty((distorted.shape[0],), dtype=torch.float64)
