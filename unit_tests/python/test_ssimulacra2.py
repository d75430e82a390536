# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.ssimulacra2: identical images score 100, more noise scores lower, a batch scores as its images one by
one, pairs, the cached reference follows the reference's contents, dtypes, no gradient, bad input. (The scores'
parity with libjxl's tool is the C++ test ssimulacra2.e2e.parity_with_libjxl; this is the binding.)"""

import pytest
import torch

import kssim


def image(shape, seed, device="cpu"):
    gen = torch.Generator().manual_seed(seed)
    base = torch.rand(shape[:-2] + (shape[-2] // 4 + 1, shape[-1] // 4 + 1), generator=gen)
    smooth = torch.nn.functional.interpolate(base.reshape(-1, 3, *base.shape[-2:]), size=shape[-2:], mode="bilinear")
    return smooth.reshape(shape).to(device)


def noisy(img, amount, seed):
    gen = torch.Generator().manual_seed(seed)
    return (img + amount * (torch.rand(img.shape, generator=gen) - 0.5).to(img.device)).clamp(0, 1)


def test_identical_images_score_100_and_noise_scores_lower(device):
    ref = image((3, 40, 48), 1, device)
    batch = torch.stack([ref, noisy(ref, 0.05, 2), noisy(ref, 0.3, 3)])
    scores = kssim.ssimulacra2(ref, batch)
    assert scores.shape == (3,) and scores.dtype == torch.float32 and not scores.requires_grad
    assert abs(float(scores[0]) - 100) < 1e-3
    assert 100 > float(scores[1]) > float(scores[2])
    one = kssim.ssimulacra2(ref, batch[1])
    assert one.shape == () and float(one) == float(scores[1])


def test_a_batch_scores_as_its_images_one_by_one_and_pairs(device):
    refs = torch.stack([image((3, 24, 20), s, device) for s in (4, 5)])
    dist = torch.stack([noisy(refs[0], 0.1, 6), noisy(refs[1], 0.2, 7)])
    batch = kssim.ssimulacra2(refs[0], dist)
    assert torch.equal(batch, torch.stack([kssim.ssimulacra2(refs[0], d) for d in dist]))
    pairs = kssim.ssimulacra2(refs, dist)
    assert float(pairs[0]) == float(batch[0])
    assert float(pairs[1]) == float(kssim.ssimulacra2(refs[1], dist[1]))


def test_the_cached_reference_follows_its_tensor(device):
    ref = image((1, 3, 16, 16), 8, device)
    dist = noisy(ref, 0.2, 9)
    first = kssim.ssimulacra2(ref, dist)
    ref.copy_(dist)  # in place: the same tensor, new contents
    assert float(kssim.ssimulacra2(ref, dist)[0]) == pytest.approx(100, abs=1e-3)
    assert float(first[0]) < 99


def test_strided_and_other_dtypes(device):
    ref = image((3, 16, 18), 10, device)
    dist = noisy(ref, 0.1, 11)
    expected = kssim.ssimulacra2(ref, dist)
    channels_last = dist.unsqueeze(0).contiguous(memory_format=torch.channels_last)
    assert float(kssim.ssimulacra2(ref, channels_last)[0]) == float(expected)
    as_double = kssim.ssimulacra2(ref.double(), dist.double())
    assert as_double.dtype == torch.float64 and float(as_double) == pytest.approx(float(expected), rel=1e-6)
    x = dist.clone().requires_grad_(True)
    assert not kssim.ssimulacra2(ref, x).requires_grad


@pytest.mark.parametrize("call, error, match", [
    (lambda r, d: kssim.ssimulacra2(r[:2], d[:2]), ValueError, "3 channels"),
    (lambda r, d: kssim.ssimulacra2(r[:, :7], d[:, :7]), ValueError, "8 x 8"),
    (lambda r, d: kssim.ssimulacra2(r, d * 2), ValueError, r"outside \[0, 1\]"),
    (lambda r, d: kssim.ssimulacra2(r, d * float("nan")), ValueError, "NaN"),
    (lambda r, d: kssim.ssimulacra2(r, d[:, :, :-1]), ValueError, "same height and width"),
    (lambda r, d: kssim.ssimulacra2(r.expand(2, 3, 16, 16), d.expand(3, 3, 16, 16)), ValueError, "one per distorted"),
    (lambda r, d: kssim.ssimulacra2(r, d.int()), TypeError, "float32"),
    (lambda r, d: kssim.ssimulacra2(r, [0.5]), TypeError, "torch.Tensor"),
    (lambda r, d: kssim.ssimulacra2(r[0], d[0]), ValueError, "3-D"),
])
def test_bad_input_raises(call, error, match):
    r = image((3, 16, 16), 12)
    d = noisy(r, 0.1, 13)
    with pytest.raises(error, match=match):
        call(r, d)
