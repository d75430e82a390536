# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Non-contiguous, channels-last, sliced, transposed and broadcast tensors give the right answer."""

import pytest
import torch

import kssim
from conftest import TOLERANCE, relative_l2
from reference_ssim import ssim_and_gradients


def _layouts(shape, dtype, device, seed):
    """(name, img1, img2): the same values in different memory layouts (leaf tensors)."""
    gen = torch.Generator().manual_seed(seed)
    n, c, h, w = shape
    big = torch.rand((n, c, h + 3, 2 * w + 1), generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
    other = torch.rand((n, c, h + 3, 2 * w + 1), generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
    other = 0.6 * big + 0.4 * other
    sliced = (big[:, :, 2:2 + h, 1::2], other[:, :, 2:2 + h, 1::2])  # rows and columns skipped
    dense = tuple(t.contiguous() for t in sliced)
    yield "channels_last", *(t.to(memory_format=torch.channels_last) for t in dense)
    yield "sliced", *sliced
    yield "transposed", *(t.transpose(2, 3).contiguous().transpose(2, 3) for t in dense)  # W-major
    yield "batch_and_channel_swapped", *(t.transpose(0, 1).contiguous().transpose(0, 1) for t in dense)
    yield "misaligned_start", *(_one_element_in(t) for t in dense)  # data not 16-byte aligned
    yield "channel_broadcast", *(t[:, :1].expand(n, c, h, w) for t in dense)  # stride 0: copied, not misread


def _one_element_in(t):
    buffer = t.new_empty(t.numel() + 1)
    view = buffer[1:].view(t.shape)
    view.copy_(t)
    return view


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_every_layout_matches_the_reference(device, dtype, padding):
    checked = []
    for name, a, b in _layouts((2, 3, 17, 19), dtype, device, seed=11):
        a = a.detach().requires_grad_(True)
        b = b.detach().requires_grad_(True)
        value = kssim.ssim(a, b, padding=padding)
        value.backward()
        expected, g1, g2 = ssim_and_gradients(a.detach().cpu().contiguous(), b.detach().cpu().contiguous(),
                                              padding=padding)
        value_tol, grad_tol = TOLERANCE[dtype]
        assert abs(value.item() - expected.item()) <= value_tol, name
        assert relative_l2(a.grad.cpu(), g1) <= grad_tol, name
        assert relative_l2(b.grad.cpu(), g2) <= grad_tol, name
        checked.append(name)
    assert len(checked) == 6


def test_channels_last_gradients_keep_the_layout(device):
    a = torch.rand(1, 3, 16, 18, device=device).to(memory_format=torch.channels_last).requires_grad_(True)
    b = torch.rand(1, 3, 16, 18, device=device).to(memory_format=torch.channels_last)
    kssim.fused_ssim(a, b).backward()
    assert a.grad.is_contiguous(memory_format=torch.channels_last)
