"""Fake kernels and the autograd formula of torch.ops.kssim.ssim (the operators are defined in C++,
src/python/csrc/TorchOps.cpp). The fake kernels give torch.compile and torch.library.opcheck the outputs'
metadata without computing; they must allocate exactly as the C++ kernels do."""

import torch


@torch.library.register_fake("kssim::ssim")
def _ssim_fake(img1, img2, window_size, sigma, k1, k2, data_range, same_padding, per_image, gradients):
    if per_image:
        return img1.new_empty((img1.shape[0],))
    return img1.new_empty(())


@torch.library.register_fake("kssim::ssim_backward")
def _ssim_backward_fake(grad, img1, img2, window_size, sigma, k1, k2, data_range, same_padding, per_image,
                        gradients):
    grad1 = torch.empty_like(img1) if gradients & 1 else img1.new_empty((0,))
    grad2 = torch.empty_like(img2) if gradients & 2 else img2.new_empty((0,))
    return grad1, grad2


def _setup_context(ctx, inputs, output):
    img1, img2, *options, gradients = inputs
    ctx.save_for_backward(img1, img2)
    ctx.options = options  # window_size, sigma, k1, k2, data_range, same_padding, per_image


def _backward(ctx, grad):
    img1, img2 = ctx.saved_tensors
    wanted = (1 if ctx.needs_input_grad[0] else 0) | (2 if ctx.needs_input_grad[1] else 0)
    grad1 = grad2 = None
    if wanted:
        # The same `gradients` as the forward call got from functional._gradients: the same cached
        # workspace, whose partial derivatives from that forward are then reused.
        grad1, grad2 = torch.ops.kssim.ssim_backward(grad, img1, img2, *ctx.options, wanted)
    return (grad1 if wanted & 1 else None, grad2 if wanted & 2 else None) + (None,) * 8


torch.library.register_autograd("kssim::ssim", _backward, setup_context=_setup_context)
