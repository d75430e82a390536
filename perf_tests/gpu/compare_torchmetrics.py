# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim.ssim(padding="reflect") against torchmetrics' SSIM, whose definition it is (reflect-padded windows, the
whole map averaged), on the GPU machine (torchmetrics is not in Debian): the values on the CLI's sample
photographs and on random images, float32 and float64, and the time of forward and forward + backward at
1x3x1080x1920 and 8x3x512x512 (CUDA events, median of --iters after --warmup; torchmetrics' own code, kssim
with reflect and with zero padding for the cost of the reflection).

    python3 perf_tests/gpu/compare_torchmetrics.py [--iters 30]
"""
import argparse
import pathlib
import statistics

import numpy as np
import torch

import kssim
from torchmetrics.functional.image import structural_similarity_index_measure as tm_ssim


def photographs(device):
    """The CLI's sample pair (reference, distorted) as 1x3xHxW in [0, 1], or None without an image reader."""
    try:
        from skimage import io
    except ImportError:
        return None
    root = pathlib.Path(__file__).resolve().parents[2] / "src" / "cli" / "samples"
    imgs = [io.imread(root / name)[..., :3] for name in ("reference.png", "distorted.png")]
    t = [torch.from_numpy(np.ascontiguousarray(i)).permute(2, 0, 1)[None].float().div(255).to(device) for i in imgs]
    return t[0], t[1]


def median_us(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1000)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    dev = "cuda"
    import torchmetrics
    print(f"torch {torch.__version__}, torchmetrics {torchmetrics.__version__}, {torch.cuda.get_device_name()}")
    pairs = {}
    photo = photographs(dev)
    if photo is not None:
        pairs["photographs " + "x".join(map(str, photo[0].shape))] = photo
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.rand(2, 3, 256, 256, generator=g)
    pairs["random 2x3x256x256"] = (x.to(dev), (x + 0.1 * torch.randn(x.shape, generator=g)).clamp(0, 1).to(dev))
    print("values (data_range 1): kssim reflect, torchmetrics, difference; kssim valid for contrast")
    for name, (u, v) in pairs.items():
        for dtype in (torch.float32, torch.float64):
            uu, vv = u.to(dtype), v.to(dtype)
            k = kssim.ssim(uu, vv, padding="reflect", data_range=1.0).item()
            t = tm_ssim(uu, vv, data_range=1.0).item()
            kv = kssim.ssim(uu, vv, padding="valid", data_range=1.0).item()
            print(f"  {name} {str(dtype)[6:]}: {k:.8f} {t:.8f} {k - t:+.2e}  (valid {kv:.8f})")
    print("time, us (median of CUDA-event timings): fwd, fwd+bwd")
    for shape in ((1, 3, 1080, 1920), (8, 3, 512, 512)):
        u = torch.rand(shape, device=dev)
        v = (u + 0.1 * torch.randn(shape, device=dev)).clamp(0, 1)
        rows = {
            "kssim same": lambda x, y: kssim.ssim(x, y, padding="same", data_range=1.0),
            "kssim reflect": lambda x, y: kssim.ssim(x, y, padding="reflect", data_range=1.0),
            "torchmetrics": lambda x, y: tm_ssim(x, y, data_range=1.0),
        }
        base = None
        for label, f in rows.items():
            fwd = median_us(lambda: f(u, v), a.warmup, a.iters)
            w = u.clone().requires_grad_(True)

            def step():
                w.grad = None
                f(w, v).backward()

            both = median_us(step, a.warmup, a.iters)
            base = base or (fwd, both)
            print(f"  {'x'.join(map(str, shape))} {label:14s} {fwd:9.1f} {both:9.1f}"
                  f"   ({fwd / base[0]:.2f}x, {both / base[1]:.2f}x of kssim same)")


if __name__ == "__main__":
    main()
