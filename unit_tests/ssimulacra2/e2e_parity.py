#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""End-to-end parity of `kssim ssimulacra2` with libjxl's `ssimulacra2` tool (Debian: libjxl-devtools).

Photographs: scikit-image's sample photos (python3-skimage). Distortions: JPEG at several qualities (Pillow's
libjpeg), Gaussian blur, Gaussian noise, downscale + upscale, written as PNG; plus grey, 16-bit grey and RGBA
(alpha) images, and small crops (8 x 8 to 300 x 200, odd sizes: fewer scales). Every pair is scored by both
tools; the test fails if any |difference| exceeds --tolerance (0.05) or if the CLI's error contract breaks.

  e2e_parity.py --kssim build/bin/kssim [--ssimulacra2 ssimulacra2] [--tolerance 0.05] [--report out.md]
"""
import argparse
import io
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageFilter
import skimage.data

PHOTOS = ["astronaut", "coffee", "chelsea", "rocket"]
# (width, height) of the small-image pairs (crops of "coffee"), odd and even, each side of the six-scale
# threshold (113) and of the former minimum (225), with three of the distortions below.
SMALL_SIZES = [(8, 8), (13, 8), (8, 9), (15, 17), (16, 16), (31, 29), (57, 41), (100, 113), (112, 112), (113, 113),
               (150, 97), (224, 224), (300, 200)]
SMALL_DISTORTIONS = ("jpeg_q30", "blur_1.0", "noise_12")


def distortions(img, rng):
    """(name, uint8 RGB array) for each distortion of img (a PIL RGB image)."""
    out = []
    for q in (10, 30, 50, 70, 90):
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=q)
        out.append((f"jpeg_q{q}", np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))))
    for r in (1.0, 2.5):
        out.append((f"blur_{r}", np.asarray(img.filter(ImageFilter.GaussianBlur(r)))))
    a = np.asarray(img).astype(np.float64)
    for s in (4.0, 12.0):
        out.append((f"noise_{s:g}", np.clip(np.round(a + rng.normal(0, s, a.shape)), 0, 255).astype(np.uint8)))
    w, h = img.size
    small = img.resize((w // 2, h // 2), Image.BICUBIC)
    out.append(("resize_half", np.asarray(small.resize((w, h), Image.BICUBIC))))
    return out


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def write_pairs(tmp, rng):
    """Writes every pair of the test as PNG files into tmp (the same files on every run: rng is seeded by the
    caller). Returns the sets [(label, (width, height), reference path, [(distortion, distorted path)])].
    make_gpu_pairs.py writes the same files for the GPU parity check."""
    sets = []

    def add_set(label, size, ref_path, dists):
        stem = os.path.splitext(ref_path)[0]
        paths = []
        for dname, arr in dists:
            paths.append((dname, f"{stem}_{dname}.png"))
            Image.fromarray(arr).save(paths[-1][1])
        sets.append((label, size, ref_path, paths))

    for name in PHOTOS:
        ref = Image.fromarray(getattr(skimage.data, name)()).convert("RGB")
        ref_path = os.path.join(tmp, f"{name}.png")
        ref.save(ref_path)
        add_set(name, ref.size, ref_path, distortions(ref, rng))

    # Other PNG flavours the CLI reads: grey, 16-bit grey, RGBA (alpha composited as the tool does).
    a = skimage.data.astronaut()
    ramp = (np.arange(a.shape[1])[None, :].repeat(a.shape[0], 0) * 255 // (a.shape[1] - 1)).astype(np.uint8)
    noise = rng.normal(0, 6, a.shape)
    flavours = {
        "grey": (Image.fromarray(a[:, :, 1]),
                 Image.fromarray(np.clip(a[:, :, 1] + noise[:, :, 1], 0, 255).astype(np.uint8))),
        "grey16": (Image.fromarray(a[:, :, 0].astype(np.uint16) * 257),
                   Image.fromarray(np.clip(a[:, :, 0] * 257.0 + 150 * noise[:, :, 0], 0, 65535).astype(np.uint16))),
        "rgba": (Image.fromarray(np.dstack([a, ramp]), "RGBA"),
                 Image.fromarray(np.dstack([np.clip(a + noise, 0, 255).astype(np.uint8), ramp]), "RGBA")),
    }
    for fname, (fr, fd) in flavours.items():
        pr, pd = os.path.join(tmp, f"{fname}_ref.png"), os.path.join(tmp, f"{fname}_dist.png")
        fr.save(pr)
        fd.save(pd)
        sets.append(("astronaut", fr.size, pr, [(fname, pd)]))

    # Small images, down to the tool's minimum of 8 x 8: fewer than six scales below 113 x 113 (the tool
    # stops before a scale whose predecessor is smaller than 8 x 8) and the tool's weights for them.
    coffee = Image.fromarray(skimage.data.coffee()).convert("RGB")
    for w, h in SMALL_SIZES:
        ref = coffee.crop((150, 100, 150 + w, 100 + h))
        pr = os.path.join(tmp, f"small_{w}x{h}.png")
        ref.save(pr)
        add_set("coffee crop", (w, h), pr,
                [(dname, arr) for dname, arr in distortions(ref, rng) if dname in SMALL_DISTORTIONS])
    return sets


def score_set(args, pair_set, rows, failures):
    """Scores the distorted images of one set against its reference with one kssim run and each with the
    tool; appends (label, size, name, tool, kssim, difference) rows."""
    label, size, ref_path, dists = pair_set
    paths = [p for _, p in dists]
    r = run([args.kssim, "ssimulacra2", ref_path] + paths)
    ours = [float(line) for line in r.stdout.split()] if r.returncode == 0 else []
    if len(ours) != len(paths):
        failures.append(f"kssim on {label} {size[0]}x{size[1]}: rc {r.returncode}, {r.stdout!r} {r.stderr.strip()}")
        return
    for (dname, p), s in zip(dists, ours):
        t = run([args.ssimulacra2, ref_path, p])
        if t.returncode != 0:
            failures.append(f"ssimulacra2 failed on {p}: {t.stderr.strip()}")
            continue
        theirs = float(t.stdout.split()[0])
        rows.append((label, size, dname, theirs, s, s - theirs))
        if not abs(s - theirs) <= args.tolerance:
            failures.append(f"{label} {size[0]}x{size[1]} {dname}: kssim {s:.6f}, ssimulacra2 {theirs:.6f}, "
                            f"diff {s - theirs:+.6f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kssim", required=True)
    ap.add_argument("--ssimulacra2", default="ssimulacra2")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--report", help="write a Markdown table of the scores")
    args = ap.parse_args()

    rng = np.random.default_rng(2026)
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for pair_set in write_pairs(tmp, rng):
            score_set(args, pair_set, rows, failures)

        # The error contract: exit 2, one "kssim: error:" line, nothing on stdout (tiny: below the tool's 8 x 8).
        tiny = os.path.join(tmp, "tiny.png")
        Image.fromarray(np.zeros((7, 300, 3), np.uint8)).save(tiny)
        for cmd in ([args.kssim, "ssimulacra2", tiny, tiny],
                    [args.kssim, "ssimulacra2", os.path.join(tmp, "astronaut.png"), os.path.join(tmp, "coffee.png")],
                    [args.kssim, "ssimulacra2", os.path.join(tmp, "missing.png"), tiny],
                    [args.kssim, "ssimulacra2", os.path.join(tmp, "astronaut.png")]):
            r = run(cmd)
            lines = r.stderr.strip().splitlines()
            if r.returncode != 2 or r.stdout or len(lines) != 1 or not lines[0].startswith("kssim: error: "):
                failures.append(f"error contract broken by {cmd[2:]}: rc {r.returncode}, stdout {r.stdout!r}, "
                                f"stderr {r.stderr!r}")
        # --json: one object per distorted image.
        r = run([args.kssim, "ssimulacra2", "--json", os.path.join(tmp, "chelsea.png"),
                 os.path.join(tmp, "chelsea_jpeg_q50.png"), os.path.join(tmp, "chelsea_blur_1.0.png")])
        import json
        objs = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
        if len(objs) != 2 or not all("ssimulacra2" in o for o in objs):
            failures.append(f"--json output unexpected: {r.stdout!r} {r.stderr!r}")

    worst = max((abs(r[5]) for r in rows), default=float("nan"))
    print(f"{len(rows)} pairs, max |kssim - ssimulacra2| = {worst:.6f} (tolerance {args.tolerance})")
    for name, size, dname, theirs, s, d in rows:
        print(f"  {name:10s} {size[0]}x{size[1]} {dname:12s} ssimulacra2 {theirs:11.6f}  kssim {s:11.6f}  diff {d:+.6f}")
    if args.report:
        with open(args.report, "w") as f:
            f.write("| photo | size | distortion | ssimulacra2 | kssim | difference |\n|---|---|---|---|---|---|\n")
            for name, size, dname, theirs, s, d in rows:
                f.write(f"| {name} | {size[0]}x{size[1]} | {dname} | {theirs:.6f} | {s:.6f} | {d:+.6f} |\n")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
