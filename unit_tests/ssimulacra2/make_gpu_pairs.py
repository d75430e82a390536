#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the SSIMULACRA2 parity pairs for a machine without image libraries (the GPU machine).

The pairs are the end-to-end parity test's (e2e_parity.py: the same PNG files, written by its write_pairs()).
Each image is stored pre-decoded, exactly as `kssim ssimulacra2` hands it to the library: a float32 .npy of
shape (1, 3, H, W), C order, sRGB in [0, 1] (samples times the float reciprocal of the maximum code, grey
expanded to RGB, alpha composited on the tool's backgrounds; src/cli/Ssimulacra2Command.cpp). The score of
libjxl's `ssimulacra2` tool for each pair is computed here from the PNG files themselves.

  make_gpu_pairs.py OUTDIR [--all] [--ssimulacra2 ssimulacra2]

OUTDIR receives the .npy files and pairs.csv (columns pair, reference, distorted, ssimulacra2). Rows with
the same pair name are one pair scored on several backgrounds (a reference with alpha: the tool keeps the
lower score). By default a subset that stays near 40 MB: all small crops and two distortions of each
photograph; --all writes all the test's pairs (about 155 MB). kssim_ssimulacra2_pairs OUTDIR scores them.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_parity  # noqa: E402  (the pairs of the CI test)

# The default subset: every small crop (all scale counts, odd sizes), and of each photograph one compression
# and one blur (four sizes up to 640 x 427). The photographs' other distortions and the grey / 16-bit /
# alpha pairs (which test the CLI's decoding more than the kernels) only with --all.
DEFAULT_PHOTO_DISTORTIONS = ("jpeg_q30", "blur_2.5")


def png_max_code(path):
    """The largest sample code of a PNG (255 or 65535), from its IHDR bit depth, as the CLI's decoder."""
    with open(path, "rb") as f:
        header = f.read(26)
    return (1 << header[24]) - 1


def decode(path, background):
    """The (1, 3, H, W) float32 planes the CLI gives the library for this PNG, alpha composited on background."""
    img = Image.open(path)
    samples = np.asarray(img)
    if samples.ndim == 2:
        samples = samples[:, :, None]
    scale = np.float32(1) / np.float32(png_max_code(path))  # a float reciprocal, as the CLI (and libjxl)
    alpha = img.mode in ("RGBA", "LA")
    colors = samples[:, :, :-1] if alpha else samples
    rgb = colors.astype(np.float32) * scale
    if rgb.shape[2] == 1:
        rgb = np.repeat(rgb, 3, axis=2)
    if alpha:
        a = samples[:, :, -1:].astype(np.float32) * scale
        # a * v + (1 - a) * bg with each product rounded to float, no fused multiply-add (as the CLI).
        rgb = a * rgb + (np.float32(1) - a) * np.float32(background)
    assert rgb.dtype == np.float32
    return np.ascontiguousarray(rgb.transpose(2, 0, 1)[None])


def has_alpha(path):
    return Image.open(path).mode in ("RGBA", "LA")


def fail(message):
    """Bad input or environment: one line on stderr, exit status 2."""
    print(f"make_gpu_pairs: error: {message}", file=sys.stderr)
    sys.exit(2)


def tool_score(tool, ref, dist):
    try:
        r = subprocess.run([tool, ref, dist], capture_output=True, text=True)
    except OSError as e:
        fail(f"cannot run libjxl's tool {tool} ({e.strerror}); Debian: libjxl-devtools, or cmake/dev-env")
    if r.returncode != 0:
        fail(f"{tool} failed on {dist}: {r.stderr.strip()}")
    return r.stdout.split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--all", action="store_true", help="all the test's pairs (about 155 MB), not the subset")
    ap.add_argument("--ssimulacra2", default="ssimulacra2", help="libjxl's tool")
    args = ap.parse_args()
    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        fail(f"cannot create {args.outdir}: {e.strerror}")

    rows = []
    written = set()

    def save(png, background, suffix):
        name = os.path.splitext(os.path.basename(png))[0] + suffix + ".npy"
        if name not in written:
            np.save(os.path.join(args.outdir, name), decode(png, background))
            written.add(name)
        return name

    rng = np.random.default_rng(2026)  # the seed of e2e_parity.py: the same files
    with tempfile.TemporaryDirectory() as tmp:
        for label, _, ref, dists in e2e_parity.write_pairs(tmp, rng):
            for dname, dist in dists:
                photo = label in e2e_parity.PHOTOS
                if not args.all and (label == "astronaut" and dname in ("grey", "grey16", "rgba")):
                    continue
                if not args.all and photo and dname not in DEFAULT_PHOTO_DISTORTIONS:
                    continue
                pair = os.path.splitext(os.path.basename(dist))[0]
                score = tool_score(args.ssimulacra2, ref, dist)
                # A reference with alpha: scored on a dark and a bright background (the tool's rule).
                backgrounds = [(0.1, "_bg0.1"), (0.9, "_bg0.9")] if has_alpha(ref) else [(0.5, "")]
                for bg, suffix in backgrounds:
                    rows.append((pair, save(ref, bg, suffix), save(dist, bg, suffix), score))

    with open(os.path.join(args.outdir, "pairs.csv"), "w") as f:
        f.write("# SSIMULACRA2 pairs of unit_tests/ssimulacra2/e2e_parity.py, pre-decoded (make_gpu_pairs.py);\n")
        f.write("# ssimulacra2: libjxl's tool on the PNG files. Rows of one pair name: the lower score counts.\n")
        f.write("pair,reference,distorted,ssimulacra2\n")
        for row in rows:
            f.write(",".join(row) + "\n")
    size = sum(os.path.getsize(os.path.join(args.outdir, n)) for n in written)
    print(f"{len({r[0] for r in rows})} pairs, {len(written)} .npy files ({size / 1e6:.1f} MB) in {args.outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
