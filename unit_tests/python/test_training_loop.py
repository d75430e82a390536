# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A real training loop: an image optimised toward a target with Adam on 0.8 L1 + 0.2 (1 - SSIM), 50
steps, float64, following a pure-PyTorch trajectory (reference_ssim.py) to 1e-8."""

import pytest
import torch

import kssim
import reference_ssim


def _trajectory(ssim, start, target, steps=50, lr=0.01):
    image = start.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([image], lr=lr)
    path = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = 0.8 * (image - target).abs().mean() + 0.2 * (1 - ssim(image, target))
        loss.backward()
        optimizer.step()
        path.append((loss.item(), image.detach().clone()))
    return path


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_adam_follows_the_float64_reference_trajectory(device, padding):
    gen = torch.Generator().manual_seed(12)
    target = torch.rand((1, 3, 37, 43), generator=gen, dtype=torch.float64)
    start = torch.rand((1, 3, 37, 43), generator=gen, dtype=torch.float64)
    ours = _trajectory(lambda x, y: kssim.fused_ssim(x, y, padding=padding), start.to(device), target.to(device))
    # kssim.fused_ssim is the drop-in: fused-ssim's float32 window (window="float32")
    reference = _trajectory(lambda x, y: reference_ssim.ssim(x, y, padding=padding, window="float32"), start, target)
    assert ours[-1][0] < 0.8 * ours[0][0]  # it trains
    for step, ((loss, image), (ref_loss, ref_image)) in enumerate(zip(ours, reference)):
        assert abs(loss - ref_loss) <= 1e-8, step
        assert (image.cpu() - ref_image).abs().max() <= 1e-8, step
