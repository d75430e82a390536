# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim's operators inside PyTorch's machinery: opcheck, torch.compile without graph breaks, the
workspace cache (nothing allocated after the first step), and backward passes in any order."""

import pytest
import torch

import kssim
from conftest import TOLERANCE, operand, random_pair, relative_l2
from kssim import _library
from reference_ssim import ssim_and_gradients


# padding: the operators' code (0 valid, 1 same, 2 reflect, 3 replicate).
@pytest.mark.parametrize("padding,per_image,float32_window", [(0, False, 0), (1, True, 1), (2, False, 0),
                                                              (3, True, 0)])
def test_opcheck(device, padding, per_image, float32_window):
    a, b = random_pair((2, 2, 16, 17), torch.float64, device, seed=1)
    a.requires_grad_(True)
    b.requires_grad_(True)
    options = operand("ssim", padding=padding, float32_window=float32_window)
    torch.library.opcheck(torch.ops.kssim.ssim.default, (a, b, options, 3, per_image))
    grad = torch.ones((2,) if per_image else (), dtype=a.dtype, device=device)
    torch.library.opcheck(torch.ops.kssim.ssim_backward.default,
                          (grad, a.detach(), b.detach(), options, 1, per_image))


def _loss(render, target):
    return 0.8 * (render - target).abs().mean() + 0.2 * (1 - kssim.fused_ssim(render, target))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_fullgraph_matches_eager(device, backend):
    a, b = random_pair((1, 3, 30, 33), torch.float32, device, seed=2)
    a.requires_grad_(True)
    eager = _loss(a, b)
    eager.backward()
    eager_grad = a.grad
    a.grad = None
    torch._dynamo.reset()
    compiled = torch.compile(_loss, fullgraph=True, backend=backend)  # fullgraph: a graph break raises
    value = compiled(a, b)
    value.backward()
    value_tol, grad_tol = TOLERANCE[torch.float32]
    assert abs(value.item() - eager.item()) <= value_tol
    assert relative_l2(a.grad, eager_grad) <= grad_tol


def test_torch_compile_dynamic_shapes(device):
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, y: kssim.ssim(x, y, reduction="none"), fullgraph=True,
                             backend="aot_eager", dynamic=True)
    for shape in [(2, 1, 20, 24), (3, 1, 25, 22)]:
        a, b = random_pair(shape, torch.float64, device, seed=shape[0])
        expected, _, _ = ssim_and_gradients(a.cpu(), b.cpu(), "none")
        assert (compiled(a, b).cpu() - expected).abs().max() <= TOLERANCE[torch.float64][0]


def test_training_steps_allocate_no_new_workspace(device):
    a, b = random_pair((2, 3, 40, 41), torch.float32, device, seed=4)
    a.requires_grad_(True)
    _loss(a, b).backward()  # first step: the workspace is allocated
    before = _library.cache_stats()
    for _ in range(3):
        a.grad = None
        _loss(a, b).backward()
    after = _library.cache_stats()
    assert after.created == before.created  # no new workspace
    assert after.recomputed == before.recomputed  # every backward reused its forward's partial derivatives


def test_backward_after_another_forward_of_the_same_shape_is_right(device):
    """Two losses of one shape share a workspace: the second forward replaces the first one's partial
    derivatives, so the first backward must notice and recompute them."""
    x1, y1 = random_pair((1, 2, 26, 27), torch.float64, device, seed=5)
    x2, y2 = random_pair((1, 2, 26, 27), torch.float64, device, seed=6)
    x1.requires_grad_(True)
    x2.requires_grad_(True)
    first = kssim.ssim(x1, y1)
    second = kssim.ssim(x2, y2)
    recomputed = _library.cache_stats().recomputed
    first.backward()  # out of order
    second.backward()
    assert _library.cache_stats().recomputed == recomputed + 2  # each found the other's partial derivatives
    for x, y in ((x1, y1), (x2, y2)):
        _, g1, _ = ssim_and_gradients(x.detach().cpu(), y.cpu())
        assert relative_l2(x.grad.cpu(), g1) <= TOLERANCE[torch.float64][1]


def test_in_place_change_between_forward_and_backward_is_caught(device):
    a, b = random_pair((1, 1, 20, 20), torch.float64, device, seed=7)
    leaf = a.clone().requires_grad_(True)
    x = leaf * 1.0
    value = kssim.ssim(x, b)
    with torch.no_grad():
        x.add_(0.1)  # the saved input changed: PyTorch's version counter catches it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        value.backward()


def test_cache_is_bounded_and_can_be_cleared(device):
    capacity = _library.cache_stats().capacity
    for size in range(12, 12 + capacity + 2):
        a, b = random_pair((1, 1, size, size), torch.float32, device, seed=size)
        kssim.ssim(a, b)
    assert _library.cache_stats().held == capacity
    kssim.clear_cache()
    assert _library.cache_stats().held == 0


def test_gradient_of_one_input_when_both_require_one(device):
    """torch.autograd.grad asks for img2's gradient only: the forward prepared both, so the backward reuses
    its workspace (computing img1's too) rather than running the forward stages again."""
    a, b = random_pair((1, 2, 21, 22), torch.float64, device, seed=9)
    a.requires_grad_(True)
    b.requires_grad_(True)
    value = kssim.ssim(a, b, padding="same")
    recomputed = _library.cache_stats().recomputed
    (g2,) = torch.autograd.grad(value, [b])
    assert _library.cache_stats().recomputed == recomputed
    _, _, expected = ssim_and_gradients(a.detach().cpu(), b.detach().cpu(), padding="same")
    assert relative_l2(g2.cpu(), expected) <= TOLERANCE[torch.float64][1]
    assert a.grad is None
