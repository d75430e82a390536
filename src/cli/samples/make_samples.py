#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generates the two sample images of the kssim command-line tool, made by the project itself:

  reference.png  a synthetic 256x192 RGB scene: sky and ground gradients, a sun, a house, a checkerboard,
                 a ring pattern, a diagonal bar and fine ground texture
  distorted.png  the same scene blurred (Gaussian, sigma 1.2), with additive noise (std ~0.03) and a
                 brightness change (+0.04), clipped and quantised to 8 bits

Only numpy, zlib and struct are used, and the "random" texture and noise come from an integer hash of the
pixel coordinates, so the output is identical on every machine and numpy version.

    python3 src/cli/samples/make_samples.py [OUTPUT_DIR]   # default: the directory of this script
    kssim compare reference.png distorted.png --map ssim_map.png
"""
import os
import struct
import sys
import zlib

import numpy as np

WIDTH, HEIGHT = 256, 192


def hash_uniform(seed, *coords):
    """Deterministic pseudo-random numbers in [0, 1) from integer coordinates (a multiply-xorshift mix)."""
    mask = np.uint64(0xFFFFFFFF)
    h = np.full(np.broadcast(*coords).shape, np.uint64(seed), dtype=np.uint64)
    for c in coords:
        h = (h ^ (np.asarray(c, dtype=np.uint64) & mask)) & mask
        for mult in (0x6A09E667, 0xBB67AE85):
            h = (h ^ (h >> np.uint64(15))) & mask
            h = (h * np.uint64(mult)) & mask
        h = (h ^ (h >> np.uint64(16))) & mask
    return h.astype(np.float64) / 4294967296.0


def hash_normal(seed, *coords):
    """Approximately standard normal numbers: the centred sum of 12 hashed uniforms (Irwin-Hall)."""
    total = sum(hash_uniform(seed * 131 + k, *coords) for k in range(12))
    return total - 6.0


def smoothstep(edge0, edge1, x):
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def blend(img, mask, color):
    """img (H, W, 3) <- mix(img, color, mask)."""
    mask = mask[..., None]
    return img * (1 - mask) + np.asarray(color, dtype=np.float64) * mask


def reference_scene():
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    horizon = 118.0
    img = np.zeros((HEIGHT, WIDTH, 3))
    # Sky: deep blue at the top to pale blue at the horizon.
    t = y / horizon
    sky = np.stack([0.20 + 0.55 * t, 0.35 + 0.50 * t, 0.75 + 0.20 * t], axis=-1)
    # Ground: green, darker towards the bottom, with fine hashed texture.
    g = (y - horizon) / (HEIGHT - horizon)
    texture = 0.10 * (hash_uniform(7, x.astype(np.int64), y.astype(np.int64)) - 0.5)
    ground = np.stack([0.30 - 0.12 * g + texture, 0.55 - 0.20 * g + texture, 0.22 - 0.08 * g + 0.5 * texture], axis=-1)
    img = np.where((y < horizon)[..., None], sky, ground)
    # Sun with a soft edge and a faint halo.
    d = np.hypot(x - 205, y - 38)
    img = blend(img, 0.35 * smoothstep(45, 22, d), (1.0, 0.95, 0.75))
    img = blend(img, smoothstep(21, 19, d), (1.0, 0.86, 0.30))
    # House: wall, roof, door and two windows.
    wall = (x >= 36) & (x < 104) & (y >= 78) & (y < 140)
    img = blend(img, wall.astype(float), (0.78, 0.30, 0.22))
    roof = (y >= 48) & (y < 78) & (np.abs(x - 70) <= (y - 48) * 1.3)
    img = blend(img, roof.astype(float), (0.35, 0.18, 0.15))
    door = (x >= 62) & (x < 78) & (y >= 108) & (y < 140)
    img = blend(img, door.astype(float), (0.25, 0.14, 0.08))
    for wx in (44, 84):
        window = (x >= wx) & (x < wx + 12) & (y >= 88) & (y < 100)
        img = blend(img, window.astype(float), (0.85, 0.92, 1.0))
        cross = window & ((np.abs(x - (wx + 5.5)) < 1) | (np.abs(y - 93.5) < 1))
        img = blend(img, cross.astype(float), (0.30, 0.20, 0.15))
    # Checkerboard of 6-pixel squares.
    board = (x >= 128) & (x < 188) & (y >= 126) & (y < 180)
    checks = ((x.astype(int) // 6 + y.astype(int) // 6) % 2).astype(float)
    img = np.where(board[..., None], (0.1 + 0.8 * checks)[..., None] * np.array([1.0, 1.0, 1.0]), img)
    # Rings of rising frequency (a small zone plate).
    r2 = (x - 222) ** 2 + (y - 150) ** 2
    rings = 0.5 + 0.5 * np.cos(r2 / 40.0)
    disc = smoothstep(30, 27, np.sqrt(r2))
    img = blend(img, disc, (0, 0, 0)) + disc[..., None] * rings[..., None] * np.array([0.9, 0.8, 1.0])
    # A diagonal bar across the sky.
    bar = np.abs((x - 0.9 * y) - 120) < 2.5
    img = blend(img, (bar & (y < 60)).astype(float), (0.95, 0.95, 0.95))
    return np.clip(img, 0.0, 1.0)


def gaussian_blur(img, sigma):
    radius = int(np.ceil(3 * sigma))
    taps = np.exp(-np.arange(-radius, radius + 1) ** 2 / (2 * sigma * sigma))
    taps /= taps.sum()
    out = img
    for axis in (0, 1):
        padded = np.pad(out, [(radius, radius) if a == axis else (0, 0) for a in range(3)], mode="reflect")
        acc = np.zeros_like(out)
        for k, w in enumerate(taps):
            sl = [slice(None)] * 3
            sl[axis] = slice(k, k + out.shape[axis])
            acc += w * padded[tuple(sl)]
        out = acc
    return out


def distort(img):
    y, x, c = np.meshgrid(np.arange(HEIGHT), np.arange(WIDTH), np.arange(3), indexing="ij")
    noisy = gaussian_blur(img, 1.2) + 0.03 * hash_normal(11, x, y, c) + 0.04
    return np.clip(noisy, 0.0, 1.0)


def to_uint8(img):
    return np.round(img * 255.0).astype(np.uint8)


def png_bytes(rgb):
    """A minimal 8-bit RGB PNG: one IDAT of unfiltered rows."""
    height, width, _ = rgb.shape

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + rgb[row].tobytes() for row in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    reference = reference_scene()
    distorted = distort(reference)
    for name, img in (("reference.png", reference), ("distorted.png", distorted)):
        path = os.path.join(out_dir, name)
        with open(path, "wb") as f:
            f.write(png_bytes(to_uint8(img)))
        print(path)


if __name__ == "__main__":
    main()
