#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Time scikit-image's SSIM with gradient, the CPU baseline for kssim's forward+backward.

What is timed, per repetition (median over --repeats after one warm-up):
  2D: for each of the C channels of an (N, C, H, W) pair of float32 images in [0, 1),
      skimage.metrics.structural_similarity(a, b, gaussian_weights=True, sigma=1.5,
          use_sample_covariance=False, data_range=1, gradient=True)
      summed over N * C (scikit-image has no batch or channel gradient), and the same without
      gradient=True (forward only) for reference.
  3D: the same call on one (D, H, W) volume per (n, c) slice (scikit-image filters n-d arrays).

scikit-image computes in float64 and runs on one core (scipy.ndimage). Its window is 11 taps for
sigma=1.5 (truncate=3.5), like kssim's default; its mean excludes a border of 5 pixels, like kssim's
valid padding (it filters with reflection at the border instead of kssim's valid/zero padding, and
its gradient is taken over the full map, so the work is comparable but the numbers are not equal).

With --kssim-json, the kssim numbers for the same shapes are read from a kssim_perf_tests JSON file
(host execution space, float, valid padding) and the speed-ups are printed.

  cmake/dev-env sh -c 'OMP_NUM_THREADS=2 OMP_PROC_BIND=false build/perf/bin/kssim_perf_tests \
      --benchmark_filter="/float/valid/(1x3x1080x1920|1x1x128x128x128)/" \
      --benchmark_out=build/perf/cpu.json --benchmark_out_format=json'
  /usr/bin/python3 perf_tests/compare_skimage.py --kssim-json build/perf/cpu.json
"""

import argparse
import json
import platform
import statistics
import time

import numpy as np
import skimage
from skimage.metrics import structural_similarity

SKIMAGE_ARGS = dict(gaussian_weights=True, sigma=1.5, use_sample_covariance=False, data_range=1)


def parse_shape(text):
    return tuple(int(v) for v in text.lower().split("x"))


def time_call(fn, repeats):
    """Median wall-clock and median process CPU seconds (scikit-image is single-threaded, so its CPU time
    is what it would take on an idle core when the machine is shared)."""
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), wall


def skimage_over_slices(a, b, gradient):
    """Sum of per-(n, c) calls; returns the mean SSIM over the slices."""
    total = 0.0
    for n in range(a.shape[0]):
        for c in range(a.shape[1]):
            r = structural_similarity(a[n, c], b[n, c], gradient=gradient, **SKIMAGE_ARGS)
            total += r[0] if gradient else r
    return total / (a.shape[0] * a.shape[1])


def kssim_lookup(results, family, mode, shape):
    """(wall us, main-thread CPU us, space) of the first host-space benchmark matching
    family/mode/float/valid/shape."""
    if results is None:
        return None, None, None
    prefix = f"{family}/{mode}/float/valid/{'x'.join(map(str, shape))}/"
    for b in results.get("benchmarks", []):
        name = b.get("name", "")
        if name.startswith(prefix) and not b.get("error_occurred") and b.get("run_type", "iteration") == "iteration":
            space = name[len(prefix):].split("/")[0]
            if space in ("OpenMP", "Serial", "Threads", "HPX"):
                return float(b["us"]), float(b["cpu_time"]) * _US[b.get("time_unit", "ns")], space
    return None, None, None


_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape2d", default="1x3x1080x1920", help="N x C x H x W (default %(default)s)")
    p.add_argument("--volume", default="1x1x128x128x128", help="N x C x D x H x W (default %(default)s)")
    p.add_argument("--repeats", type=int, default=3, help="timed repetitions per case (default %(default)s)")
    p.add_argument("--kssim-json", help="kssim_perf_tests --benchmark_out JSON to compare against")
    p.add_argument("--json", help="write the skimage timings here")
    args = p.parse_args()

    kssim = None
    if args.kssim_json:
        with open(args.kssim_json) as f:
            kssim = json.load(f)

    rng = np.random.default_rng(20261129)
    cases = []
    shape2d, volume = parse_shape(args.shape2d), parse_shape(args.volume)
    assert len(shape2d) == 4 and len(volume) == 5, "shapes are NxCxHxW and NxCxDxHxW"
    for family, shape in (("ssim2d", shape2d), ("ssim3d", volume)):
        a = rng.random(shape, dtype=np.float32)
        b = np.clip(a + 0.1 * rng.standard_normal(shape, dtype=np.float32), 0, 1).astype(np.float32)
        for mode, gradient in (("fwd", False), ("fwd+bwd", True)):
            value = skimage_over_slices(a, b, gradient)
            median, cpu, samples = time_call(lambda: skimage_over_slices(a, b, gradient), args.repeats)
            k_us, k_cpu_us, k_space = kssim_lookup(kssim, family, mode, shape)
            cases.append(dict(family=family, mode=mode, shape="x".join(map(str, shape)),
                              skimage_us=median * 1e6, skimage_cpu_us=cpu * 1e6, skimage_samples_s=samples,
                              skimage_ssim=value, kssim_us=k_us, kssim_cpu_us=k_cpu_us, kssim_space=k_space,
                              speedup=(median * 1e6 / k_us) if k_us else None))
            print(f"  {family} {mode:8s} {cases[-1]['shape']}: skimage {median * 1e3:9.1f} ms"
                  + (f", kssim ({k_space}) {k_us / 1e3:8.1f} ms, speed-up {median * 1e6 / k_us:6.1f}x" if k_us else ""),
                  flush=True)

    print()
    print(f"scikit-image {skimage.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.processor() or platform.machine()}")
    print("wall: median wall-clock; cpu: scikit-image's process CPU time, kssim's main-thread CPU time")
    print(f"{'case':44s} {'skimage wall':>12s} {'cpu':>8s} {'kssim wall':>10s} {'cpu':>8s} {'speed-up':>9s}")
    for c in cases:
        name = f"{c['family']}/{c['mode']}/float/valid/{c['shape']}"
        k = f"{c['kssim_us'] / 1e3:10.1f} {c['kssim_cpu_us'] / 1e3:8.1f}" if c["kssim_us"] else f"{'-':>10s} {'-':>8s}"
        s = f"{c['speedup']:8.1f}x" if c["speedup"] else f"{'-':>9s}"
        print(f"{name:44s} {c['skimage_us'] / 1e3:12.1f} {c['skimage_cpu_us'] / 1e3:8.1f} {k} {s}")
    print("(times in ms; speed-up = skimage wall / kssim wall)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(skimage=skimage.__version__, numpy=np.__version__, cases=cases), f, indent=1)


if __name__ == "__main__":
    main()
