# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CUDA only (skipped elsewhere): kssim runs on PyTorch's current stream, without synchronising the host,
and a training step allocates no device memory after the first."""

import time

import pytest
import torch

import kssim
from conftest import TOLERANCE, random_pair, relative_l2
from kssim import _library
from reference_ssim import ssim_and_gradients

pytestmark = pytest.mark.skipif(not (torch.cuda.is_available() and _library.HAS_CUDA),
                                reason="needs a CUDA device and a CUDA build of kssim")


SLEEP_CYCLES = 1_000_000_000  # torch.cuda._sleep: about 0.5 s at 2 GHz


def _sleep_seconds():
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    torch.cuda._sleep(SLEEP_CYCLES)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def test_a_non_default_stream_is_respected():
    """The input is written on a side stream behind a sleep kernel: kssim must queue behind it on that
    stream (a kernel on any other stream would read the placeholder 0.25s), and the training step must
    return to the host long before the sleep ends (a host wait for any of its kernels would take the rest of
    the sleep: e.g. Kokkos' constant-memory launches, which wait for the previous such kernel)."""
    a, b = random_pair((2, 3, 64, 80), torch.float32, "cuda", seed=21)
    x = torch.full_like(a, 0.25)
    sleep = _sleep_seconds()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # A first step on this stream allocates its workspace (Kokkos' allocations synchronise), as a training
        # loop's first step does; the step measured below reuses it.
        warm = x.clone().requires_grad_(True)
        kssim.ssim(warm, b).backward()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.copy_(a)
        x.requires_grad_(True)
        start = time.perf_counter()
        value = kssim.ssim(x, b)
        value.backward()
        elapsed = time.perf_counter() - start
        busy = not side.query()
    assert elapsed < sleep / 4, f"the step waited on the host: {elapsed:.3f} s of a {sleep:.3f} s sleep"
    assert busy, "the side stream finished its sleep before the step returned"
    side.synchronize()
    expected, g1, g2 = ssim_and_gradients(a.cpu(), b.cpu())
    value_tol, grad_tol = TOLERANCE[torch.float32]
    assert abs(value.item() - expected.item()) <= value_tol
    assert relative_l2(x.grad.cpu(), g1) <= grad_tol


def test_training_steps_allocate_no_device_memory():
    a, b = random_pair((1, 3, 270, 480), torch.float32, "cuda", seed=22)
    a.requires_grad_(True)

    def step():
        a.grad = None
        loss = 0.8 * (a - b).abs().mean() + 0.2 * (1 - kssim.fused_ssim(a, b))
        loss.backward()

    step()
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()["segment.all.allocated"]
    stats = _library.cache_stats()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["segment.all.allocated"] == before  # no new cudaMalloc by PyTorch
    assert _library.cache_stats().created == stats.created  # no new kssim workspace
    assert _library.cache_stats().recomputed == stats.recomputed


def test_a_second_cuda_device_if_present():
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device")
    a, b = random_pair((1, 2, 30, 31), torch.float64, "cuda:1", seed=23)
    expected, _, _ = ssim_and_gradients(a.cpu(), b.cpu())
    assert abs(kssim.ssim(a, b).item() - expected.item()) <= TOLERANCE[torch.float64][0]


def _graph_step(x, b):
    x.grad = None
    loss = 0.8 * (x - b).abs().mean() + 0.2 * (1 - kssim.fused_ssim(x, b))
    loss.backward()
    return loss


def test_cuda_graph_capture_of_a_training_step_replays_new_inputs():
    """torch.cuda.graph as its documentation uses it (warm-up on a side stream, then capture): the replay
    computes what eager calls compute, for inputs copied into the captured tensors after the capture."""
    kssim.clear_cache()
    a, b = random_pair((1, 3, 64, 80), torch.float32, "cuda", seed=24)
    x = a.clone().requires_grad_(True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            _graph_step(x, b)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    x.grad = None
    with torch.cuda.graph(graph):
        static_loss = _graph_step(x, b)
    created = _library.cache_stats().created
    for seed in (25, 26):
        new, _ = random_pair((1, 3, 64, 80), torch.float32, "cuda", seed=seed)
        with torch.no_grad():
            x.copy_(new)
        graph.replay()
        torch.cuda.synchronize()
        eager_x = new.clone().requires_grad_(True)
        eager_loss = _graph_step(eager_x, b)
        assert abs(static_loss.item() - eager_loss.item()) <= 1e-6
        assert relative_l2(x.grad, eager_x.grad) <= 1e-6
    assert _library.cache_stats().created == created  # the replays and the eager steps shared the workspace


def test_cuda_graph_capture_without_warm_up_raises_a_clear_error():
    kssim.clear_cache()
    a, b = random_pair((1, 2, 40, 48), torch.float32, "cuda", seed=27)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="inside a CUDA graph capture"):
        with torch.cuda.graph(graph):
            kssim.fused_ssim(a, b, train=False)
    # The process and kssim carry on: the same call outside a capture works.
    expected, _, _ = ssim_and_gradients(a.cpu(), b.cpu(), padding="same", window="float32")
    assert abs(kssim.fused_ssim(a, b).item() - expected.item()) <= TOLERANCE[torch.float32][0]


# Every metric's operator goes through the same cache entry; one loss per metric.
_LOSSES = {
    "ssim": lambda x, y, m: 1 - kssim.fused_ssim(x, y),
    "l1_ssim_loss": lambda x, y, m: kssim.l1_ssim_loss(x, y),
    "ms_ssim": lambda x, y, m: 1 - kssim.ms_ssim(x, y),
    "masked_ssim": lambda x, y, m: 1 - kssim.masked_ssim(x, y, m),
}


@pytest.mark.parametrize("metric", sorted(_LOSSES))
def test_cuda_graph_capture_after_eager_use_on_the_default_stream(metric):
    """A trainer that evaluates eagerly on the default stream and then captures the same shapes: the
    workspace made on the legacy default stream (which cannot join a capture) moves to a stream of kssim's
    own; the replays give the eager results bitwise, eager calls after the capture still do, and no second
    workspace is made."""
    kssim.clear_cache()
    loss_fn = _LOSSES[metric]
    a, b = random_pair((1, 3, 176, 168), torch.float32, "cuda", seed=30)
    mask = torch.rand((1, 1, 176, 168), device="cuda", generator=torch.Generator("cuda").manual_seed(31))

    def step(x):
        x.grad = None
        loss = loss_fn(x, b, mask)
        loss.backward()
        return loss

    def eager(values):
        x = values.clone().requires_grad_(True)
        loss = step(x)
        return loss.detach().clone(), x.grad.clone()

    torch.cuda.set_stream(torch.cuda.default_stream())  # the legacy default stream (null), PyTorch's default
    first_loss, first_grad = eager(a)  # eager, on the legacy default stream
    created = _library.cache_stats().created
    x = a.clone().requires_grad_(True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step(x)
    for seed in (32, 33):
        new, _ = random_pair((1, 3, 176, 168), torch.float32, "cuda", seed=seed)
        with torch.no_grad():
            x.copy_(new)
        graph.replay()
        expected_loss, expected_grad = eager(new)  # the default stream again, now forked onto kssim's
        torch.cuda.synchronize()
        assert torch.equal(static_loss, expected_loss)
        assert torch.equal(x.grad, expected_grad)
    again_loss, again_grad = eager(a)
    assert torch.equal(again_loss, first_loss) and torch.equal(again_grad, first_grad)
    assert _library.cache_stats().created == created


def test_torch_compile_default_then_reduce_overhead():
    """torch.compile's default mode runs kssim eagerly on the default stream; reduce-overhead then captures
    the same shapes with CUDA graphs. Both give the eager values."""
    kssim.clear_cache()
    a, b = random_pair((2, 3, 48, 64), torch.float32, "cuda", seed=34)

    def loss_fn(x, y):
        return 0.8 * (x - y).abs().mean() + 0.2 * (1 - kssim.fused_ssim(x, y))

    for mode in ("default", "reduce-overhead"):
        torch._dynamo.reset()
        compiled = torch.compile(loss_fn, mode=mode)
        for step in range(4):  # reduce-overhead: warm-up, recording, replays
            x = (a + 0.01 * step).requires_grad_(True)
            loss = compiled(x, b)
            loss.backward()
            eager_x = (a + 0.01 * step).requires_grad_(True)
            eager = loss_fn(eager_x, b)
            eager.backward()
            assert abs(loss.item() - eager.item()) <= 1e-6, mode
            assert relative_l2(x.grad, eager_x.grad) <= 1e-6, mode


def test_calls_from_two_streams_share_one_workspace_in_order():
    """A workspace made on one stream serves another: its kernels are ordered after that stream's work and
    before its next (the events of StreamOrder.hpp), and no second workspace is made."""
    kssim.clear_cache()
    a, b = random_pair((2, 3, 64, 80), torch.float32, "cuda", seed=29)
    kssim.fused_ssim(a, b, train=False)
    created = _library.cache_stats().created
    side = torch.cuda.Stream()
    x = torch.full_like(a, 0.25)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES // 10)
        x.copy_(a)  # the workspace's kernels must see this, written behind the sleep on `side`
        value = kssim.fused_ssim(x, b, train=False)
        doubled = value * 2  # queued on `side` after the join
    torch.cuda.synchronize()
    expected, _, _ = ssim_and_gradients(a.cpu(), b.cpu(), padding="same", window="float32")
    assert abs(value.item() - expected.item()) <= TOLERANCE[torch.float32][0]
    assert abs(doubled.item() - 2 * expected.item()) <= 2 * TOLERANCE[torch.float32][0]
    assert _library.cache_stats().created == created
