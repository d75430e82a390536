# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fake kernels of torch.ops.kssim (the operators and their autograd formulas are C++:
src/python/csrc/TorchOps.cpp, SsimAutograd.cpp). They give torch.compile and torch.library.opcheck the
outputs' metadata without computing, so they must allocate exactly as the C++ kernels do."""

import torch


@torch.library.register_fake("kssim::ssim")
def _ssim_fake(img1, img2, window_size, sigma, k1, k2, data_range, padding, per_image, gradients,
               float32_window=False):
    if per_image:
        return img1.new_empty((img1.shape[0],))
    return img1.new_empty(())


def _image_gradients_fake(img1, img2, gradients):
    """Both backward operators return the gradients that the bits of `gradients` ask for, else empty tensors."""
    grad1 = torch.empty_like(img1) if gradients & 1 else img1.new_empty((0,))
    grad2 = torch.empty_like(img2) if gradients & 2 else img2.new_empty((0,))
    return grad1, grad2


@torch.library.register_fake("kssim::ssim_backward")
def _ssim_backward_fake(grad, img1, img2, window_size, sigma, k1, k2, data_range, padding, per_image,
                        gradients, float32_window=False):
    return _image_gradients_fake(img1, img2, gradients)


@torch.library.register_fake("kssim::l1_ssim_loss")
def _l1_ssim_loss_fake(img1, img2, l1_weight, window_size, sigma, k1, k2, data_range, padding, gradients,
                       float32_window=False):
    return img1.new_empty(())


@torch.library.register_fake("kssim::l1_ssim_loss_backward")
def _l1_ssim_loss_backward_fake(grad, img1, img2, l1_weight, window_size, sigma, k1, k2, data_range, padding,
                                gradients, float32_window=False):
    return _image_gradients_fake(img1, img2, gradients)


@torch.library.register_fake("kssim::ms_ssim")
def _ms_ssim_fake(img1, img2, window_size, sigma, k1, k2, data_range, weights, per_image, gradients):
    if per_image:
        return img1.new_empty((img1.shape[0],))
    return img1.new_empty(())


@torch.library.register_fake("kssim::ms_ssim_backward")
def _ms_ssim_backward_fake(grad, img1, img2, window_size, sigma, k1, k2, data_range, weights, per_image, gradients):
    return _image_gradients_fake(img1, img2, gradients)


@torch.library.register_fake("kssim::masked_ssim")
def _masked_ssim_fake(img1, img2, mask, normalized, window_size, sigma, k1, k2, data_range, padding,
                      gradients):
    return img1.new_empty(())


@torch.library.register_fake("kssim::masked_ssim_backward")
def _masked_ssim_backward_fake(grad, img1, img2, mask, normalized, window_size, sigma, k1, k2, data_range,
                               padding, gradients):
    return _image_gradients_fake(img1, img2, gradients)


@torch.library.register_fake("kssim::ssimulacra2")
def _ssimulacra2_fake(reference, distorted):
    return distorted.new_empty((distorted.shape[0],), dtype=torch.float64)
