# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The binding's own memory traffic: each forward returns a fresh tensor that the kernels wrote in the
images' dtype (no conversion operator, no alias of the workspace), and each backward reads a float32 or
float64 upstream gradient where it is (other dtypes are converted first): the same values either way."""

import pytest
import torch

import kssim
from conftest import operand, random_pair

SAME = operand("ssim", padding=1)  # kssim.ssim's options, same padding
LOSS = operand("l1_ssim_loss", padding=1)
ops = torch.ops.kssim


def _bits(t):
    return t.contiguous().view(torch.uint8) if t.dim() else t.reshape(1).view(torch.uint8)


def _same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_results_are_fresh_tensors_of_the_images_dtype(device, dtype, reduction):
    a, b = random_pair((2, 3, 20, 21), dtype, device, seed=31)
    c, d = random_pair((2, 3, 20, 21), dtype, device, seed=32)
    first = kssim.ssim(a, b, reduction=reduction)
    kept = first.clone()
    second = kssim.ssim(c, d, reduction=reduction)  # same workspace
    assert first.dtype == dtype and first.shape == (() if reduction == "mean" else (2,))
    assert first.data_ptr() != second.data_ptr()
    assert _same_bits(first, kept)  # a result the caller keeps is not overwritten by the next call
    assert not torch.equal(first, second)
    again = kssim.ssim(a, b, reduction=reduction)
    assert _same_bits(again, first)


def test_per_image_results_are_the_means_of_each_image(device):
    a, b = random_pair((3, 2, 18, 19), torch.float64, device, seed=33)
    per_image = kssim.ssim(a, b, reduction="none")
    for n in range(3):
        alone = kssim.ssim(a[n:n + 1], b[n:n + 1])
        assert abs(float(per_image[n]) - float(alone)) <= 1e-15


def _upstreams(value, device):
    """The same upstream gradient in forms the kernels read in place, and in forms converted first."""
    return [
        torch.tensor(value, dtype=torch.float32, device=device),
        torch.tensor(value, dtype=torch.float64, device=device),
        torch.full((3,), value, dtype=torch.float32, device=device)[1:2],  # offset view
        torch.tensor(value, dtype=torch.float64, device=device).expand(1, 1),  # broadcast
        torch.tensor([[value]], dtype=torch.float32, device=device).t(),
        torch.tensor(value, dtype=torch.float16, device=device),  # converted
        torch.tensor(value, dtype=torch.bfloat16, device=device),  # converted
    ]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("loss", ["ssim", "l1_ssim_loss"])
def test_upstream_gradient_read_in_place_or_converted_gives_the_same_gradients(device, dtype, loss):
    a, b = random_pair((1, 2, 19, 22), dtype, device, seed=34)
    value = -0.375  # exact in every dtype below

    def backward(grad):
        if loss == "ssim":
            return ops.ssim_backward(grad, a, b, SAME, 3, False)
        return ops.l1_ssim_loss_backward(grad, a, b, LOSS, 3, False)

    expected = backward(torch.tensor(value, dtype=torch.float64, device=device))
    for grad in _upstreams(value, device):
        got = backward(grad)
        for g, e in zip(got, expected):
            assert _same_bits(g, e), f"upstream {grad.dtype} of strides {tuple(grad.stride())}"
    # An integer upstream gradient is converted too.
    got = backward(torch.tensor(-3, device=device))
    expected = backward(torch.tensor(-3.0, dtype=torch.float64, device=device))
    assert all(_same_bits(g, e) for g, e in zip(got, expected))


def test_float32_upstream_is_widened_exactly(device):
    a, b = random_pair((1, 1, 17, 17), torch.float64, device, seed=35)
    grad32 = torch.tensor(0.1, dtype=torch.float32, device=device)  # 0.1 rounded to float32
    got = ops.ssim_backward(grad32, a, b, SAME, 1, False)[0]
    expected = ops.ssim_backward(grad32.double(), a, b, SAME, 1, False)[0]
    assert _same_bits(got, expected)


def test_autograd_upstream_of_any_dtype(device):
    a, b = random_pair((1, 3, 20, 20), torch.float32, device, seed=36)
    grads = []
    for through in (lambda v: 2 * v, lambda v: 2 * v.double(), lambda v: 2 * v.half()):
        x = a.clone().requires_grad_(True)
        through(kssim.fused_ssim(x, b)).backward()
        grads.append(x.grad)
    assert _same_bits(grads[0], grads[1]) and _same_bits(grads[0], grads[2])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_upstream_gradient_on_another_device_raises(device):
    a, b = random_pair((1, 1, 16, 16), torch.float32, device, seed=37)
    other = torch.device("cpu") if device.type == "cuda" else torch.device("cuda")
    with pytest.raises(ValueError, match="grad must be on the images' device"):
        ops.ssim_backward(torch.ones((), device=other), a, b, SAME, 1, False)
