# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.SSIM and kssim.L1SSIMLoss (MS_SSIM and MaskedSSIM: their metric's tests): the modules give their
function's values and gradients with the options they hold, and show them in repr()."""

import torch

import kssim
from conftest import random_pair


def test_ssim_module(device):
    img1, img2 = random_pair((2, 2, 16, 17), torch.float64, device, seed=1)
    module = kssim.SSIM(window_size=7, padding="same", reduction="none", window="float32")
    assert torch.equal(module(img1, img2),
                       kssim.ssim(img1, img2, window_size=7, padding="same", reduction="none", window="float32"))
    assert "window_size=7" in repr(module) and list(module.parameters()) == []


def test_l1_ssim_loss_module_and_gradients(device):
    img1, img2 = random_pair((1, 3, 16, 17), torch.float64, device, seed=2)
    x = img1.clone().requires_grad_(True)
    loss = kssim.L1SSIMLoss(l1_weight=0.6)(x, img2)
    (g,) = torch.autograd.grad(loss, (x,))
    y = img1.clone().requires_grad_(True)
    (e,) = torch.autograd.grad(kssim.l1_ssim_loss(y, img2, l1_weight=0.6), (y,))
    assert torch.equal(g, e)
