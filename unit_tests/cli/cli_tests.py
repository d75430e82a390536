#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""End-to-end tests of the kssim command-line tool, run by CTest one group at a time:

    cli_tests.py --kssim build/bin/kssim --source-dir . GROUP     (GROUP: see GROUPS below, or "all")

Each group runs the real executable on files made here and checks stdout, stderr, exit status and output
files against NumPy (ssim_reference.py) or against the same data given in another format.
"""
import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

try:  # Pillow writes the JPEG, TIFF and WebP test files (Debian python3-pil, installed by cmake/dev-env)
    from PIL import Image
except ImportError:  # pragma: no cover
    Image = None

sys.dont_write_bytecode = True  # keep the source tree clean of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from float_codecs import exr_bytes, pfm_bytes  # noqa: E402
from png_codec import chunk, decode_png, encode_png, read_chunks  # noqa: E402
from ssim_reference import ssim_map  # noqa: E402
from ms_ssim_reference import masked_ssim, masked_ssim_parts, ms_ssim, ms_ssim_per_channel  # noqa: E402


class Context:
    def __init__(self, kssim, source_dir, workdir):
        self.kssim = kssim
        self.source_dir = source_dir
        self.workdir = workdir
        self.failures = []
        self.checks = 0
        self.counter = 0

    # ---- bookkeeping ----
    def check(self, condition, message):
        self.checks += 1
        if not condition:
            self.failures.append(message)
            print("FAIL: " + message)
        return condition

    def path(self, name):
        return os.path.join(self.workdir, name)

    def fresh_dir(self, name):
        self.counter += 1
        d = self.path("%s_%d" % (name, self.counter))
        os.makedirs(d)
        return d

    def save_npy(self, name, array, version=None):
        p = self.path(name)
        with open(p, "wb") as f:
            if version is None:
                np.save(f, array)
            else:
                np.lib.format.write_array(f, array, version=version)
        return p

    def save_bytes(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    # ---- running the tool ----
    def run(self, *args, cwd=None, stdin=None):
        r = subprocess.run([self.kssim] + [str(a) for a in args], capture_output=True, cwd=cwd, timeout=120,
                           input=stdin if stdin is not None else b"")
        return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")

    def ok(self, *args, cwd=None, stdin=None):
        """Runs a command that must succeed silently on stderr; returns stdout."""
        rc, out, err = self.run(*args, cwd=cwd, stdin=stdin)
        self.check(rc == 0, "expected success of %s, got %d: %s" % (" ".join(map(str, args)), rc, err.strip()))
        self.check(err == "", "expected empty stderr for %s, got %r" % (" ".join(map(str, args)), err))
        return out

    def ok_json(self, *args, stdin=None):
        out = self.ok(*(list(args) + ["--json"]), stdin=stdin)
        lines = out.splitlines()
        self.check(len(lines) == 1, "--json must print one line, got %r" % out)
        try:
            return json.loads(out)
        except ValueError:
            self.check(False, "invalid JSON: %r" % out)
            return {}

    def fails(self, label, *args, out_dir=None, cwd=None, stdin=None):
        """Runs a command that must fail as a usage/input error: status 2, one 'kssim: error:' stderr line,
        nothing on stdout, and no files appearing in out_dir (if given)."""
        before = sorted(os.listdir(out_dir)) if out_dir else None
        rc, out, err = self.run(*args, cwd=cwd, stdin=stdin)
        self.check(rc == 2, "[%s] expected exit status 2, got %d (stderr %r)" % (label, rc, err))
        self.check(out == "", "[%s] expected empty stdout, got %r" % (label, out))
        lines = err.split("\n")
        self.check(len(lines) == 2 and lines[1] == "" and lines[0].startswith("kssim: error:"),
                   "[%s] expected exactly one stderr line starting 'kssim: error:', got %r" % (label, err))
        if out_dir:
            after = sorted(os.listdir(out_dir))
            self.check(after == before, "[%s] output files appeared: %s" % (label, sorted(set(after) - set(before))))
        return err


def rng(seed):
    return np.random.default_rng(seed)


def pair(shape, dtype, seed, noise=0.15, scale=1.0):
    g = rng(seed)
    a = g.random(shape)
    b = np.clip(a + noise * g.standard_normal(shape), 0, 1)
    return (scale * a).astype(dtype), (scale * b).astype(dtype)


def close(x, y, atol, rtol=0.0):
    return np.allclose(x, y, atol=atol, rtol=rtol)


def normalized(shape, dims):
    return (1,) * (dims + 2 - len(shape)) + tuple(shape)


# ------------------------------------------------------------------------------------------------------------
# values: mean, map and per-image means against NumPy, 2D and 3D, every padding, both dtypes, option sweeps.
PADDINGS = ("valid", "same", "reflect", "replicate")


def check_central_differences(ctx, f, a, b, grad_a, grad_b, g, trials, tag=""):
    """The CLI's gradients against central differences (step 1e-6) of the reference f(a, b) at `trials`
    random elements (drawn with the generator g) of both inputs."""
    h = 1e-6
    for _ in range(trials):
        idx = tuple(int(g.integers(0, s)) for s in a.shape)
        for which, grad in (("a", grad_a), ("b", grad_b)):
            xp, xm, yp, ym = a.copy(), a.copy(), b.copy(), b.copy()
            (xp if which == "a" else yp)[idx] += h
            (xm if which == "a" else ym)[idx] -= h
            fd = (f(xp, yp) - f(xm, ym)) / (2 * h)
            ctx.check(abs(grad[idx] - fd) < 1e-8 + 1e-5 * abs(fd),
                      "%sd/d%s at %s: %r vs finite difference %r" % (tag, which, idx, grad[idx], fd))


def group_values(ctx):
    sweeps = [
        dict(window=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0),
        dict(window=7, sigma=1.0, k1=0.02, k2=0.05, data_range=2.0),
        dict(window=3, sigma=0.8, k1=0.0, k2=0.03, data_range=255.0),
    ]
    for dtype, atol in ((np.float64, 1e-10), (np.float32, 2e-5)):
        for padding in PADDINGS:
            for i, kw in enumerate(sweeps):
                a, b = pair((2, 3, 24, 20), dtype, seed=10 + i, scale=kw["data_range"])
                pa, pb = ctx.save_npy("va.npy", a), ctx.save_npy("vb.npy", b)
                m = ctx.path("vmap.npy")
                args = [pa, pb, "--padding", padding, "--window", kw["window"], "--sigma", kw["sigma"], "--k1", kw["k1"],
                        "--k2", kw["k2"], "--data-range", kw["data_range"]]
                j = ctx.ok_json("compare", *args, "--per-image", "--map", m)
                ref = ssim_map(a, b, padding=padding, **kw)
                tag = "%s %s %s" % (np.dtype(dtype).name, padding, kw)
                ctx.check(j["padding"] == padding, "JSON padding %s: %r" % (tag, j["padding"]))
                ctx.check(abs(j["ssim"] - ref.mean()) < atol, "mean %s: %r vs %r" % (tag, j["ssim"], ref.mean()))
                got = np.load(m)
                ctx.check(got.dtype == dtype and got.shape == ref.shape, "map dtype/shape %s: %s %s" % (tag, got.dtype, got.shape))
                if got.shape == ref.shape:
                    ctx.check(close(got, ref, atol), "map %s: max err %g" % (tag, np.abs(got - ref).max()))
                per = ref.reshape(2, -1).mean(axis=1)
                ctx.check(close(j["per_image"], per, atol), "per_image %s: %r vs %r" % (tag, j["per_image"], per))
                plain = ctx.ok("compare", *args).splitlines()
                ctx.check(len(plain) == 1 and float(plain[0]) == j["ssim"],
                          "plain output %s must be one line with the JSON value: %r" % (tag, plain))
                ctx.check(len(plain) == 1 and len(plain[0]) <= len(repr(j["ssim"])),
                          "plain output %s must be the shortest round-trip decimal: %r vs %r" % (tag, plain, j["ssim"]))
    # Volumes.
    for dtype, atol in ((np.float64, 1e-10), (np.float32, 2e-5)):
        for padding in PADDINGS:
            a, b = pair((1, 2, 12, 13, 14), dtype, seed=3)
            pa, pb = ctx.save_npy("va3.npy", a), ctx.save_npy("vb3.npy", b)
            m = ctx.path("vmap3.npy")
            j = ctx.ok_json("compare", pa, pb, "--dims", 3, "--window", 5, "--sigma", 1.1, "--padding", padding,
                            "--map", m)
            ref = ssim_map(a, b, window=5, sigma=1.1, padding=padding, dims=3)
            ctx.check(abs(j["ssim"] - ref.mean()) < atol, "3D mean %s %s" % (padding, np.dtype(dtype).name))
            got = np.load(m)
            ctx.check(got.shape == ref.shape and close(got, ref, atol), "3D map %s %s" % (padding, np.dtype(dtype).name))
    # Reflect at its smallest extents (window // 2 + 1 along one axis), replicate below the window's reach.
    for padding, shape, window in (("reflect", (1, 2, 6, 23), 11), ("reflect", (3, 4, 9), 7),
                                   ("replicate", (2, 1, 3, 17), 11), ("replicate", (1, 1, 1, 9), 5)):
        a, b = pair(shape, np.float64, seed=4)
        pa, pb = ctx.save_npy("vs_a.npy", a), ctx.save_npy("vs_b.npy", b)
        m = ctx.path("vs_map.npy")
        j = ctx.ok_json("compare", pa, pb, "--padding", padding, "--window", window, "--map", m)
        ref = ssim_map(a.reshape(normalized(shape, 2)), b.reshape(normalized(shape, 2)), window=window,
                       padding=padding)
        tag = "%s %s window %d" % (padding, shape, window)
        ctx.check(abs(j["ssim"] - ref.mean()) < 1e-10, "mean %s: %r vs %r" % (tag, j["ssim"], ref.mean()))
        got = np.load(m)
        ctx.check(got.shape == shape and close(got.reshape(ref.shape), ref, 1e-10), "map %s" % tag)
    # Identical inputs give 1.
    a, _ = pair((1, 1, 16, 16), np.float64, seed=5)
    pa = ctx.save_npy("same.npy", a)
    ctx.check(abs(float(ctx.ok("compare", pa, pa)) - 1.0) < 1e-12, "SSIM of identical arrays must be 1")


# ------------------------------------------------------------------------------------------------------------
# grads: --grad-a / --grad-b shapes, dtypes and values (central differences of the NumPy reference).
def group_grads(ctx):
    def fd_check(shape, dims, padding, window, seed, tag):
        a, b = pair(shape, np.float64, seed=seed)
        pa, pb = ctx.save_npy("ga_in.npy", a), ctx.save_npy("gb_in.npy", b)
        ga, gb = ctx.path("grad_a.npy"), ctx.path("grad_b.npy")
        j = ctx.ok_json("compare", pa, pb, "--dims", dims, "--padding", padding, "--window", window,
                        "--grad-a", ga, "--grad-b", gb)
        mean_only = ctx.ok_json("compare", pa, pb, "--dims", dims, "--padding", padding, "--window", window)
        ctx.check(j["ssim"] == mean_only["ssim"], "[%s] the mean must not depend on --grad" % tag)
        grad_a, grad_b = np.load(ga), np.load(gb)
        ctx.check(grad_a.shape == a.shape and grad_a.dtype == np.float64, "[%s] grad-a shape %s" % (tag, grad_a.shape))
        ctx.check(grad_b.shape == a.shape and grad_b.dtype == np.float64, "[%s] grad-b shape %s" % (tag, grad_b.shape))
        if grad_a.shape != a.shape or grad_b.shape != a.shape:
            return
        f = lambda x, y: ssim_map(x.reshape(normalized(shape, dims)), y.reshape(normalized(shape, dims)),  # noqa
                                  window=window, padding=padding, dims=dims).mean()
        check_central_differences(ctx, f, a, b, grad_a, grad_b, rng(seed + 100), 6, "[%s] " % tag)

    fd_check((2, 2, 16, 15), 2, "valid", 7, 1, "2D valid")
    fd_check((2, 16, 15), 2, "same", 5, 2, "2D same, (C, H, W)")
    fd_check((13, 14), 2, "valid", 11, 3, "2D (H, W)")
    fd_check((1, 1, 9, 10, 11), 3, "valid", 5, 4, "3D valid")
    fd_check((9, 10, 11), 3, "same", 3, 5, "3D same (D, H, W)")
    fd_check((2, 2, 16, 15), 2, "reflect", 7, 11, "2D reflect")
    fd_check((6, 14), 2, "reflect", 11, 12, "2D reflect, H just above window // 2")
    fd_check((2, 13, 14), 2, "replicate", 11, 13, "2D replicate, (C, H, W)")
    fd_check((1, 1, 9, 10, 11), 3, "reflect", 5, 14, "3D reflect")
    fd_check((3, 10, 11), 3, "replicate", 7, 15, "3D replicate, D below the window's reach")

    # float32 gradients: float32 files of the right shape, close to the float64 ones.
    a, b = pair((1, 3, 20, 21), np.float64, seed=7)
    pa, pb = ctx.save_npy("g64a.npy", a), ctx.save_npy("g64b.npy", b)
    qa, qb = ctx.save_npy("g32a.npy", a.astype(np.float32)), ctx.save_npy("g32b.npy", b.astype(np.float32))
    ctx.ok("compare", pa, pb, "--grad-a", ctx.path("r64.npy"))
    ctx.ok("compare", qa, qb, "--grad-a", ctx.path("r32.npy"))
    r64, r32 = np.load(ctx.path("r64.npy")), np.load(ctx.path("r32.npy"))
    ctx.check(r32.dtype == np.float32 and r32.shape == a.shape, "float32 gradient dtype/shape")
    ctx.check(close(r32, r64, atol=1e-3 * np.abs(r64).max()), "float32 gradient close to float64")

    # --max-workspace: a volume split into slabs gives the unsplit results (float64: to rounding), also where
    # the slabs at the field's ends read past it (reflect, replicate).
    wa_arr, wb_arr = pair((1, 1, 40, 18, 17), np.float64, seed=9)
    wa, wb = ctx.save_npy("ws_a.npy", wa_arr), ctx.save_npy("ws_b.npy", wb_arr)
    for padding in PADDINGS:
        args = ("--dims", 3, "--padding", padding)
        whole = ctx.ok_json("compare", wa, wb, *args, "--grad-a", ctx.path("ws_g0.npy"), "--map", ctx.path("ws_m0.npy"))
        split = ctx.ok_json("compare", wa, wb, *args, "--max-workspace", "150KB", "--grad-a", ctx.path("ws_g1.npy"),
                            "--map", ctx.path("ws_m1.npy"))
        ctx.check(abs(whole["ssim"] - split["ssim"]) < 1e-13,
                  "--max-workspace %s: mean %r vs %r" % (padding, split["ssim"], whole["ssim"]))
        g0, g1 = np.load(ctx.path("ws_g0.npy")), np.load(ctx.path("ws_g1.npy"))
        ctx.check(np.abs(g1 - g0).max() <= 1e-12 * np.abs(g0).max(),
                  "--max-workspace %s: gradient differs from the unsplit one" % padding)
        ctx.check(np.abs(np.load(ctx.path("ws_m1.npy")) - np.load(ctx.path("ws_m0.npy"))).max() < 1e-13,
                  "--max-workspace %s: map differs from the unsplit one" % padding)
        if padding != "valid":
            ref = ssim_map(wa_arr, wb_arr, padding=padding, dims=3).mean()
            ctx.check(abs(whole["ssim"] - ref) < 1e-10, "--max-workspace %s: mean %r vs NumPy %r"
                      % (padding, whole["ssim"], ref))
    d = ctx.fresh_dir("ws_small")
    ctx.fails("--max-workspace too small for one row", "compare", wa, wb, "--dims", 3, "--max-workspace", 100,
              "--map", os.path.join(d, "m.npy"), out_dir=d)
    ctx.fails("--max-workspace not a size", "compare", wa, wb, "--max-workspace", "lots", out_dir=d)

    # Only the requested gradient is written.
    d = ctx.fresh_dir("only_b")
    ctx.ok("compare", pa, pb, "--grad-b", os.path.join(d, "gb.npy"))
    ctx.check(sorted(os.listdir(d)) == ["gb.npy"], "only --grad-b must be written: %s" % os.listdir(d))
    # The gradient of identical images vanishes (SSIM is maximal there).
    ctx.ok("compare", pa, pa, "--grad-a", ctx.path("g0.npy"))
    ctx.check(np.abs(np.load(ctx.path("g0.npy"))).max() < 1e-12, "gradient at A == B must vanish")


# ------------------------------------------------------------------------------------------------------------
# ranks: every accepted rank for --dims 2 and 3, both dtypes, .npy versions 1.0, 2.0 and 3.0.
def group_ranks(ctx):
    cases = [(2, (20, 22), 11), (2, (3, 20, 22), 11), (2, (2, 3, 20, 22), 11),
             (3, (12, 13, 14), 5), (3, (2, 12, 13, 14), 5), (3, (2, 2, 12, 13, 14), 5)]
    for dims, shape, window in cases:
        for dtype in (np.float32, np.float64):
            a, b = pair(shape, dtype, seed=len(shape) + dims)
            pa, pb = ctx.save_npy("ra.npy", a), ctx.save_npy("rb.npy", b)
            m = ctx.path("rmap.npy")
            j = ctx.ok_json("compare", pa, pb, "--dims", dims, "--window", window, "--map", m, "--per-image")
            tag = "dims %d shape %s %s" % (dims, shape, np.dtype(dtype).name)
            map_shape = tuple(shape[:-dims]) + tuple(s - window + 1 for s in shape[-dims:])
            ctx.check(j.get("shape") == list(shape), "[%s] json shape %r" % (tag, j.get("shape")))
            ctx.check(j.get("map_shape") == list(map_shape), "[%s] json map_shape %r" % (tag, j.get("map_shape")))
            ctx.check(j.get("dtype") == np.dtype(dtype).name, "[%s] json dtype %r" % (tag, j.get("dtype")))
            ctx.check(j.get("dims") == dims, "[%s] json dims" % tag)
            got = np.load(m)
            ctx.check(got.shape == map_shape and got.dtype == dtype, "[%s] map file %s %s" % (tag, got.shape, got.dtype))
            n = normalized(shape, dims)
            ref = ssim_map(a.reshape(n), b.reshape(n), window=window, dims=dims)
            atol = 1e-10 if dtype == np.float64 else 2e-5
            ctx.check(abs(j["ssim"] - ref.mean()) < atol, "[%s] mean" % tag)
            ctx.check(len(j.get("per_image", [])) == n[0], "[%s] per_image length" % tag)
            # The same data with all leading axes spelled out gives the same bits.
            pa5, pb5 = ctx.save_npy("ra_full.npy", a.reshape(n)), ctx.save_npy("rb_full.npy", b.reshape(n))
            full = ctx.ok_json("compare", pa5, pb5, "--dims", dims, "--window", window)
            ctx.check(full["ssim"] == j["ssim"], "[%s] leading unit axes must not change the result" % tag)
    # Format versions 2.0 and 3.0.
    a, b = pair((16, 16), np.float32, seed=9)
    base = ctx.ok("compare", ctx.save_npy("v1a.npy", a), ctx.save_npy("v1b.npy", b))
    for version in ((2, 0), (3, 0)):
        out = ctx.ok("compare", ctx.save_npy("vxa.npy", a, version), ctx.save_npy("vxb.npy", b, version))
        ctx.check(out == base, ".npy version %s must read like 1.0" % (version,))
    # Any file name: the format is recognised from the content.
    shutil.copy(ctx.path("v1a.npy"), ctx.path("array_a.data"))
    ctx.check(ctx.ok("compare", ctx.path("array_a.data"), ctx.path("v1b.npy")) == base, "content sniffing")


# ------------------------------------------------------------------------------------------------------------
# images: PNG (all color types, 1-16 bits) and PGM/PPM load exactly like the equivalent float32 arrays.
def image_as_array(samples, max_value, drop_alpha):
    s = samples if samples.ndim == 3 else samples[..., None]
    if drop_alpha:
        s = s[..., :-1]
    return (s.astype(np.float64) / max_value).astype(np.float32).transpose(2, 0, 1)[None]


def compare_with_arrays(ctx, tag, file_a, file_b, arr_a, arr_b, fmt):
    na, nb = ctx.save_npy("ia.npy", arr_a), ctx.save_npy("ib.npy", arr_b)
    m_img, m_arr = ctx.path("imap.npy"), ctx.path("amap.npy")
    j_img = ctx.ok_json("compare", file_a, file_b, "--window", 7, "--map", m_img)
    j_arr = ctx.ok_json("compare", na, nb, "--window", 7, "--map", m_arr)
    if not j_img or not j_arr:
        return
    ctx.check(j_img["ssim"] == j_arr["ssim"], "[%s] image and array SSIM differ: %r vs %r" % (tag, j_img["ssim"], j_arr["ssim"]))
    ctx.check(j_img["shape"] == list(arr_a.shape), "[%s] shape %r, expected %r" % (tag, j_img["shape"], arr_a.shape))
    ctx.check(j_img["dtype"] == "float32", "[%s] images load as float32" % tag)
    ctx.check(j_img["inputs"]["a"]["format"] == fmt, "[%s] format %r" % (tag, j_img["inputs"]["a"]["format"]))
    ctx.check(np.array_equal(np.load(m_img), np.load(m_arr)), "[%s] maps differ" % tag)


def group_png(ctx):
    g = rng(21)
    h, w = 17, 19
    for depth in (8, 16):
        top = (1 << depth) - 1
        for channels, name in ((1, "gray"), (2, "gray+alpha"), (3, "RGB"), (4, "RGBA")):
            sa = g.integers(0, top + 1, size=(h, w, channels))
            sb = np.clip(sa + g.integers(-top // 8, top // 8, size=sa.shape), 0, top)
            fa = ctx.save_bytes("pa.png", encode_png(sa, depth))
            fb = ctx.save_bytes("pb.png", encode_png(sb, depth))
            alpha = channels in (2, 4)
            compare_with_arrays(ctx, "PNG %d-bit %s" % (depth, name), fa, fb, image_as_array(sa, top, alpha),
                                image_as_array(sb, top, alpha), "png")
    # Low bit depths of gray expand to 8 bits (value * 255 / (2^depth - 1)).
    for depth in (1, 2, 4):
        top = (1 << depth) - 1
        sa = g.integers(0, top + 1, size=(h, w))
        sb = g.integers(0, top + 1, size=(h, w))
        fa = ctx.save_bytes("la.png", encode_png(sa, depth))
        fb = ctx.save_bytes("lb.png", encode_png(sb, depth))
        compare_with_arrays(ctx, "PNG %d-bit gray" % depth, fa, fb,
                            image_as_array(np.round(sa * 255.0 / top), 255, False),
                            image_as_array(np.round(sb * 255.0 / top), 255, False), "png")
    # Palette images become RGB; a palette's transparency (tRNS) is an alpha channel and is dropped.
    palette = g.integers(0, 256, size=(16, 3))
    ia, ib = g.integers(0, 16, size=(h, w)), g.integers(0, 16, size=(h, w))
    trns = [(b"tRNS", bytes(range(0, 256, 16)))]
    fa = ctx.save_bytes("pal_a.png", encode_png(ia, 8, color_type=3, palette=palette, extra_chunks=trns))
    fb = ctx.save_bytes("pal_b.png", encode_png(ib, 8, color_type=3, palette=palette))
    compare_with_arrays(ctx, "PNG palette", fa, fb, image_as_array(palette[ia], 255, False),
                        image_as_array(palette[ib], 255, False), "png")
    # Alpha is dropped, not composited: RGBA with any alpha equals the RGB image.
    rgb_a, rgb_b = g.integers(0, 256, size=(h, w, 3)), g.integers(0, 256, size=(h, w, 3))
    alpha = g.integers(0, 256, size=(h, w, 1))
    out_rgb = ctx.ok("compare", ctx.save_bytes("c3a.png", encode_png(rgb_a)), ctx.save_bytes("c3b.png", encode_png(rgb_b)))
    out_rgba = ctx.ok("compare", ctx.save_bytes("c4a.png", encode_png(np.concatenate([rgb_a, alpha], 2))),
                      ctx.save_bytes("c4b.png", encode_png(np.concatenate([rgb_b, 255 - alpha], 2))))
    ctx.check(out_rgb == out_rgba, "alpha must be dropped")
    # Gamma chunks are ignored.
    gama = [(b"gAMA", struct.pack(">I", 100000))]
    out_gamma = ctx.ok("compare", ctx.save_bytes("g3a.png", encode_png(rgb_a, extra_chunks=gama)), ctx.path("c3b.png"))
    ctx.check(out_gamma == out_rgb, "gAMA must be ignored")
    # PNG against an equivalent float32 .npy is allowed (same shape and dtype).
    out_mixed = ctx.ok("compare", ctx.path("c3a.png"), ctx.save_npy("c3b.npy", image_as_array(rgb_b, 255, False)))
    ctx.check(out_mixed == out_rgb, "PNG against .npy")


def pnm_bytes(samples, max_value, plain, comment=False):
    channels = 1 if samples.ndim == 2 else samples.shape[2]
    h, w = samples.shape[:2]
    magic = {(1, True): "P2", (1, False): "P5", (3, True): "P3", (3, False): "P6"}[(channels, plain)]
    header = magic + ("\n# made by cli_tests.py\n" if comment else "\n") + "%d %d\n%d\n" % (w, h, max_value)
    flat = samples.reshape(-1)
    if plain:
        body = "\n".join(" ".join(str(int(v)) for v in flat[i : i + 12]) for i in range(0, len(flat), 12)) + "\n"
        return (header + body).encode()
    return header.encode() + flat.astype(">u2" if max_value > 255 else np.uint8).tobytes()


def group_pnm(ctx):
    g = rng(31)
    h, w = 16, 18
    for channels in (1, 3):
        for max_value in (255, 65535, 100, 1000, 7):
            for plain in (False, True):
                shape = (h, w) if channels == 1 else (h, w, 3)
                sa = g.integers(0, max_value + 1, size=shape)
                sb = np.clip(sa + g.integers(-max(1, max_value // 8), max(2, max_value // 8), size=shape), 0, max_value)
                fa = ctx.save_bytes("a.pnm", pnm_bytes(sa, max_value, plain, comment=True))
                fb = ctx.save_bytes("b.pnm", pnm_bytes(sb, max_value, plain))
                tag = "%s maxval %d %s" % ("PGM" if channels == 1 else "PPM", max_value, "plain" if plain else "binary")
                compare_with_arrays(ctx, tag, fa, fb, image_as_array(sa, max_value, False),
                                    image_as_array(sb, max_value, False), "pnm")
    # PGM and an 8-bit gray PNG of the same samples agree.
    s1, s2 = g.integers(0, 256, size=(h, w)), g.integers(0, 256, size=(h, w))
    out_pgm = ctx.ok("compare", ctx.save_bytes("x.pgm", pnm_bytes(s1, 255, False)),
                     ctx.save_bytes("y.pgm", pnm_bytes(s2, 255, False)))
    out_png = ctx.ok("compare", ctx.save_bytes("x.png", encode_png(s1)), ctx.save_bytes("y.png", encode_png(s2)))
    ctx.check(out_pgm == out_png, "PGM and PNG of the same samples must agree")


# ------------------------------------------------------------------------------------------------------------
# json: the fields of --json, and the plain --per-image / --repeat lines.
def group_json(ctx):
    a, b = pair((2, 1, 20, 20), np.float32, seed=41)
    pa, pb = ctx.save_npy("ja.npy", a), ctx.save_npy("jb.npy", b)
    d = ctx.fresh_dir("json_out")
    m, ga = os.path.join(d, "m.png"), os.path.join(d, "ga.npy")
    j = ctx.ok_json("compare", pa, pb, "--per-image", "--repeat", 3, "--map", m, "--grad-a", ga, "--padding", "same")
    expected_types = {"ssim": float, "shape": list, "dtype": str, "padding": str, "backend": str, "per_image": list,
                      "timing": dict, "map_shape": list, "window": int, "sigma": float, "k1": float, "k2": float,
                      "data_range": float, "dims": int, "inputs": dict, "outputs": dict}
    for key, kind in expected_types.items():
        ctx.check(key in j and isinstance(j[key], kind), "json field %r: %r" % (key, j.get(key)))
    if ctx.failures:
        return
    ctx.check(j["shape"] == [2, 1, 20, 20] and j["dtype"] == "float32" and j["padding"] == "same", "json values")
    ctx.check(j.get("metric") == "ssim" and j.get("value") == j["ssim"] and "mask" not in j, "json metric and value")
    ctx.check(j["map_shape"] == [2, 1, 20, 20], "same padding keeps the size")
    known = {"Serial", "OpenMP", "Threads", "Cuda", "HIP", "SYCL", "OpenMPTarget", "HPX", "OpenACC"}
    ctx.check(j["backend"] in known, "backend %r" % j["backend"])
    ctx.check(len(j["per_image"]) == 2 and all(isinstance(v, float) for v in j["per_image"]), "per_image")
    ctx.check(abs(sum(j["per_image"]) / 2 - j["ssim"]) < 1e-6, "per-image means average to the mean")
    t = j["timing"]
    ctx.check(t.get("repeat") == 3 and 0 < t.get("min_s", -1) <= t.get("median_s", -1), "timing %r" % t)
    ctx.check(j["outputs"] == {"map": m, "grad_a": ga}, "outputs %r" % j["outputs"])
    ctx.check(j["inputs"]["a"] == {"path": pa, "format": "npy"}, "inputs %r" % j["inputs"])
    # Full precision: the JSON number round-trips to the same double as the 17-digit plain output.
    plain = ctx.ok("compare", pa, pb, "--padding", "same").strip()
    ctx.check(float(plain) == j["ssim"], "plain %s vs json %r" % (plain, j["ssim"]))
    # Without --per-image there is no per_image; without --repeat no timing.
    j2 = ctx.ok_json("compare", pa, pb)
    ctx.check("per_image" not in j2 and "timing" not in j2, "optional fields must be absent")
    # Plain output with --per-image and --repeat.
    lines = ctx.ok("compare", pa, pb, "--per-image", "--repeat", 2).splitlines()
    ctx.check(len(lines) == 4, "plain --per-image --repeat prints 4 lines: %r" % lines)
    if len(lines) == 4:
        ctx.check(lines[1].startswith("image 0: ") and lines[2].startswith("image 1: "), "per-image lines %r" % lines)
        ctx.check(lines[3].startswith("timing: repeat=2 median_s="), "timing line %r" % lines[3])
        # Times print as the shortest decimal that round-trips (no 0.49189420499999997 float noise).
        for field in lines[3].split()[2:]:
            text = field.split("=")[1]
            ctx.check(len(text) <= len(repr(float(text))), "timing field %r is not the shortest round trip" % field)
    # Non-ASCII and odd paths still give valid JSON.
    odd = ctx.save_npy("ünïcode name.npy", a)
    j3 = ctx.ok_json("compare", odd, pb)
    ctx.check(j3.get("inputs", {}).get("a", {}).get("path") == odd, "unicode path in JSON")


# ------------------------------------------------------------------------------------------------------------
# map: --map .npy / .png, the colormap, tiling and gutters.
STOPS = [(0.0, (0, 0, 0)), (0.25, (70, 20, 130)), (0.5, (200, 40, 80)), (0.75, (245, 150, 30)), (1.0, (255, 255, 215))]


def colormap(s):
    if s <= 0:
        return STOPS[0][1]
    for (x0, c0), (x1, c1) in zip(STOPS, STOPS[1:]):
        if s <= x1:
            t = (s - x0) / (x1 - x0)
            return tuple(int(math.floor(a + t * (b - a) + 0.5)) for a, b in zip(c0, c1))
    return STOPS[-1][1]


def group_map(ctx):
    # Identical images: every tile pixel is the color of 1; gutters are gray.
    a, _ = pair((1, 3, 30, 26), np.float32, seed=51)
    pa = ctx.save_npy("ma.npy", a)
    m = ctx.path("same.png")
    ctx.ok("compare", pa, pa, "--window", 7, "--map", m)
    with open(m, "rb") as f:
        png = f.read()
    img, depth, color_type, text = decode_png(png)
    ctx.check(depth == 8 and color_type == 2, "map PNG must be 8-bit RGB")
    ctx.check(img.shape == (24, 3 * 20 + 2 * 2, 3), "tiled map size %s" % (img.shape,))
    if img.shape == (24, 64, 3):
        for c in range(3):
            tile = img[:, c * 22 : c * 22 + 20]
            ctx.check((tile == np.array([255, 255, 215])).all(), "tile %d of identical images must be pale yellow" % c)
        for x in (20, 21, 42, 43):
            ctx.check((img[:, x] == 128).all(), "gutter column %d must be gray" % x)
    ctx.check("black" in text.get("Description", "") and text.get("Title") == "kssim SSIM map", "PNG text %r" % text)

    # Different images: pixels follow the documented colormap of the .npy map.
    a, b = pair((2, 2, 20, 23), np.float64, seed=52, noise=0.6)
    pa, pb = ctx.save_npy("mb_a.npy", a), ctx.save_npy("mb_b.npy", b)
    mn, mp = ctx.path("m.npy"), ctx.path("m.png")
    ctx.ok("compare", pa, pb, "--window", 5, "--map", mn)
    ctx.ok("compare", pa, pb, "--window", 5, "--map", mp)
    values = np.load(mn)
    img = decode_png(open(mp, "rb").read())[0].astype(int)
    hh, ww = values.shape[2:]
    ctx.check(img.shape == (2 * hh + 2, 2 * ww + 2, 3), "2x2 tiling size %s" % (img.shape,))
    ctx.check(values.min() < 0.25 and values.max() > 0.5, "the test map should span the colormap")
    if img.shape == (2 * hh + 2, 2 * ww + 2, 3):
        worst = 0
        for n in range(2):
            for c in range(2):
                tile = img[n * (hh + 2) : n * (hh + 2) + hh, c * (ww + 2) : c * (ww + 2) + ww]
                for y in range(0, hh, 3):
                    for x in range(0, ww, 2):
                        worst = max(worst, np.abs(tile[y, x] - np.array(colormap(values[n, c, y, x]))).max())
        ctx.check(worst <= 1, "map PNG colors differ from the documented colormap by %d" % worst)

    # Volumes: one row per (n, c), one column per depth slice.
    a, b = pair((1, 2, 9, 10, 11), np.float32, seed=53)
    pa, pb = ctx.save_npy("m3a.npy", a), ctx.save_npy("m3b.npy", b)
    m3 = ctx.path("m3.png")
    ctx.ok("compare", pa, pb, "--dims", 3, "--window", 3, "--map", m3)
    ihdr = read_chunks(open(m3, "rb").read())[0][1]
    width, height = struct.unpack(">II", ihdr[:8])
    ctx.check((width, height) == (7 * 9 + 6 * 2, 2 * 8 + 2), "3D tiling size %s" % ((width, height),))
    # An upper-case extension works too.
    ctx.ok("compare", pa, pb, "--dims", 3, "--window", 3, "--map", ctx.path("M3.PNG"))
    ctx.check(open(ctx.path("M3.PNG"), "rb").read()[:8] == b"\x89PNG\r\n\x1a\n", "--map .PNG writes a PNG")


# ------------------------------------------------------------------------------------------------------------
# errors: every bad input or usage ends with status 2, one stderr line, empty stdout and no output files.
def group_errors(ctx):
    d = ctx.fresh_dir("err_out")
    outs = ["--map", os.path.join(d, "m.npy"), "--grad-a", os.path.join(d, "ga.npy"), "--grad-b",
            os.path.join(d, "gb.npy")]
    a32, b32 = pair((16, 16), np.float32, seed=61)
    A = ctx.save_npy("ea.npy", a32)
    B = ctx.save_npy("eb.npy", b32)
    f = lambda label, *args: ctx.fails(label, *args, out_dir=d)  # noqa: E731

    def expect(label, *args):
        f(label, "compare", *args, *outs)

    # Usage.
    f("no arguments")
    f("unknown subcommand", "frobnicate", A, B)
    f("one positional", "compare", A)
    f("several B with --map", "compare", A, B, B, "--map", os.path.join(d, "m.npy"))
    ctx.fails("two inputs from stdin", "compare", "-", "-", stdin=b"", out_dir=d)
    expect("unknown option", A, B, "--foo")
    expect("missing option value", A, B, "--window")
    expect("non-numeric window", A, B, "--window", "abc")
    expect("fractional window", A, B, "--window", "3.5")
    expect("even window", A, B, "--window", 4)
    expect("zero window", A, B, "--window", 0)
    expect("negative window", A, B, "--window", -3)
    expect("window too large", A, B, "--window", 33)
    expect("zero sigma", A, B, "--sigma", 0)
    expect("negative sigma", A, B, "--sigma", -1.5)
    expect("nan sigma", A, B, "--sigma", "nan")
    expect("zero data range", A, B, "--data-range", 0)
    expect("negative data range", A, B, "--data-range", -1)
    expect("both k zero", A, B, "--k1", 0, "--k2", 0)
    expect("negative k1", A, B, "--k1", -0.01)
    expect("infinite sigma", A, B, "--sigma", "inf")
    # The rules are the library's (kssim::validate); the tool names its own options in the message.
    err = f("even window, named as the option", "compare", A, B, "--window", 4, *outs)
    ctx.check("--window" in err and "window_size" not in err, "[window message] expected --window in %r" % err)
    err = f("infinite data range, named as the option", "compare", A, B, "--data-range", "inf", *outs)
    ctx.check("--data-range" in err and "finite" in err, "[data range message] got %r" % err)
    err = f("both k zero, named as the options", "compare", A, B, "--k1", 0, "--k2", 0, *outs)
    ctx.check("--k1 and --k2" in err, "[k message] got %r" % err)
    expect("unknown padding", A, B, "--padding", "mirror")
    err = f("unknown padding, the four named", "compare", A, B, "--padding", "Reflect", *outs)
    ctx.check("valid, same, reflect or replicate" in err, "[padding message] got %r" % err)
    expect("bad dims", A, B, "--dims", 4)
    expect("zero repeat", A, B, "--repeat", 0)
    f("map extension", "compare", A, B, "--map", os.path.join(d, "m.jpg"))
    f("grad extension", "compare", A, B, "--grad-a", os.path.join(d, "g.png"))
    f("missing output directory", "compare", A, B, "--map", os.path.join(d, "nope", "m.npy"))
    f("output is a directory", "compare", A, B, "--map", d + os.sep + ".")
    f("same output twice", "compare", A, B, "--grad-a", os.path.join(d, "g.npy"), "--grad-b", os.path.join(d, "g.npy"))

    # Shapes and dtypes.
    expect("shape mismatch", A, ctx.save_npy("e_shape.npy", np.zeros((16, 17), np.float32)))
    expect("rank mismatch", A, ctx.save_npy("e_rank.npy", b32[None]))
    expect("dtype mismatch", A, ctx.save_npy("e_f64.npy", b32.astype(np.float64)))
    small = ctx.save_npy("e_small.npy", np.zeros((8, 8), np.float32))
    expect("smaller than the window", small, small)
    # A mirror image reaches window // 2 pixels: reflect needs every spatial extent above it, replicate nothing.
    thin = ctx.save_npy("e_thin.npy", pair((5, 30), np.float32, seed=6)[0])
    err = f("thinner than reflect's reach", "compare", thin, thin, "--padding", "reflect", *outs)
    ctx.check("--padding reflect" in err and "(5, 30)" in err, "[reflect size message] got %r" % err)
    expect("thinner than reflect's reach, window 17", small, small, "--padding", "reflect", "--window", 17)
    vol_thin = ctx.save_npy("e_vol_thin.npy", np.zeros((3, 16, 16), np.float32))
    expect("volume thinner than reflect's reach", vol_thin, vol_thin, "--dims", 3, "--padding", "reflect",
           "--window", 7)
    ctx.check(abs(float(ctx.ok("compare", thin, thin, "--padding", "replicate")) - 1) < 1e-6,
              "replicate takes thin inputs")
    vol = ctx.save_npy("e_vol.npy", np.zeros((6, 16, 16), np.float32))
    expect("volume shallower than the window", vol, vol, "--dims", 3)
    one_d = ctx.save_npy("e_1d.npy", np.zeros(64, np.float32))
    expect("rank 1", one_d, one_d)
    six_d = ctx.save_npy("e_6d.npy", np.zeros((1, 1, 1, 1, 16, 16), np.float32))
    expect("rank 6", six_d, six_d, "--dims", 3)
    expect("rank 5 with --dims 2", six_d.replace("6d", "6d"), six_d)
    two_d = A
    expect("rank 2 with --dims 3", two_d, two_d, "--dims", 3)
    empty = ctx.save_npy("e_empty.npy", np.zeros((0, 16), np.float32))
    expect("empty array", empty, empty)
    nan = a32.copy()
    nan[3, 4] = np.nan
    expect("NaN input", ctx.save_npy("e_nan.npy", nan), B)
    inf = a32.copy()
    inf[0, 0] = np.inf
    expect("infinite input", A, ctx.save_npy("e_inf.npy", inf))
    png = ctx.save_bytes("e_img.png", encode_png(np.zeros((16, 16), np.uint8)))
    expect("image with --dims 3", png, png, "--dims", 3)

    # Unsupported .npy content.
    expect("int32", ctx.save_npy("e_i4.npy", np.zeros((16, 16), np.int32)), A)
    expect("float16", ctx.save_npy("e_f2.npy", np.zeros((16, 16), np.float16)), A)
    expect("complex", ctx.save_npy("e_c8.npy", np.zeros((16, 16), np.complex64)), A)
    expect("big-endian", ctx.save_npy("e_be.npy", np.zeros((16, 16), ">f4")), A)
    expect("Fortran order", ctx.save_npy("e_fortran.npy", np.asfortranarray(np.zeros((16, 17), np.float32))), A)
    expect("structured", ctx.save_npy("e_struct.npy", np.zeros((16, 16), dtype=[("x", "<f4")])), A)
    good = open(A, "rb").read()
    expect("truncated npy", ctx.save_bytes("e_trunc.npy", good[:-5]), A)
    expect("npy with trailing bytes", ctx.save_bytes("e_trail.npy", good + b"\0\0\0\0"), A)
    expect("corrupt npy header", ctx.save_bytes("e_hdr.npy", good[:10] + b"{'descr': '<f4', 'fortran_order': False, 'shape': (16, 16 }".ljust(len(good) - 10 - 1024 - 1) + b"\n" + good[-1024:]), A)
    expect("npy header only", ctx.save_bytes("e_magic.npy", good[:9]), A)

    # Unreadable, corrupt or unsupported files.
    expect("missing file", os.path.join(d, "does_not_exist.npy"), A)
    expect("directory", ctx.workdir, A)
    expect("empty file", ctx.save_bytes("e_zero.npy", b""), A)
    expect("unknown format", ctx.save_bytes("e_text.txt", b"hello, world\n"), A)
    goodpng = encode_png(np.zeros((16, 16, 3), np.uint8))
    expect("truncated PNG", ctx.save_bytes("e_t.png", goodpng[: len(goodpng) // 2]), png)
    expect("PNG without IEND", ctx.save_bytes("e_noend.png", goodpng[:-12]), png)
    bad_crc = bytearray(goodpng)
    bad_crc[30] ^= 0xFF  # inside IHDR's CRC
    expect("PNG CRC error", ctx.save_bytes("e_crc.png", bytes(bad_crc)), png)
    bad_zlib = goodpng[:33] + chunk(b"IDAT", b"\x78\x9c garbage data") + chunk(b"IEND", b"")
    expect("PNG bad zlib data", ctx.save_bytes("e_zlib.png", bad_zlib), png)
    huge = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 900000, 900000, 16, 6, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(b"\0" * 100)) + chunk(b"IEND", b"")
    expect("PNG announcing a huge image", ctx.save_bytes("e_huge.png", huge), png)
    pgm = pnm_bytes(np.zeros((16, 16), np.uint8), 255, False)
    expect("truncated PGM", ctx.save_bytes("e_t.pgm", pgm[:-1]), png)
    expect("PGM with trailing data", ctx.save_bytes("e_x.pgm", pgm + b"\0"), png)
    expect("PGM sample above maxval", ctx.save_bytes("e_s.pgm", b"P2\n2 1\n10\n3 11\n"), png)
    expect("PGM maxval too large", ctx.save_bytes("e_m.pgm", b"P5\n1 1\n65536\n\0\0"), png)
    expect("PGM maxval zero", ctx.save_bytes("e_0.pgm", b"P5\n1 1\n0\n\0"), png)
    expect("PGM bad header", ctx.save_bytes("e_h.pgm", b"P5\nwide 16\n255\n"), png)
    expect("PBM", ctx.save_bytes("e.pbm", b"P1\n2 2\n0 1\n1 0\n"), png)
    expect("PAM", ctx.save_bytes("e.pam", b"P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\0"), png)

    # A file that existed before a failed run is left untouched.
    keep = os.path.join(d, "keep.npy")
    with open(keep, "wb") as fh:
        fh.write(b"old")
    ctx.fails("existing output kept", "compare", A, small, "--map", keep, out_dir=d)
    ctx.check(open(keep, "rb").read() == b"old", "a failed run must not touch an existing output file")
    os.remove(keep)


# ------------------------------------------------------------------------------------------------------------
# help: --help, compare --help, --version.
def group_help(ctx):
    words = ("--padding", "--window", "--sigma", "--k1", "--k2", "--data-range", "--dims", "--json", "--per-image",
             "--per-channel", "--channel-axis", "--threshold", "--map", "--map-channels", "--map-legend", "--grad-a",
             "--grad-b", "--repeat", "alpha", "ALPHA IS DROPPED", "pale yellow", "EXIT STATUS",
             "kssim compare reference.png distorted.png", ".npy", "PGM", "PPM", "16-bit", "Fortran", "JPEG", "TIFF",
             "WebP", "OpenEXR", "PFM", "(H, W, C)", "(w-1)/2", "standard input", "REF D1 D2", "--metric", "ms-ssim",
             "--mask", "--mask-mode", "normalized", "pytorch-msssim")
    for args in (["compare", "--help"], ["compare", "-h"]):
        out = ctx.ok(*args)
        for word in words:
            ctx.check(word in out, "%s must mention %r" % (" ".join(args), word))
        for code in ("0  success", "1  with --threshold", "2  error", "3  unexpected internal error"):
            ctx.check(code in out, "%s must document exit status %r" % (" ".join(args), code))
    for args in (["--help"], ["-h"], ["compare", "--help"]):
        out = ctx.ok(*args)
        ctx.check("\n\n\n" not in out and not out.startswith("\n"), "%s prints runs of blank lines" % " ".join(args))
        ctx.check(all(line == line.rstrip() for line in out.splitlines()), "%s has trailing spaces" % " ".join(args))
    # The top-level help is the overview: it names the command and where the details are, not all of them.
    top = ctx.ok("--help")
    ctx.check("compare" in top and "kssim compare --help" in top, "kssim --help must point to compare --help")
    ctx.check("--window" not in top and "EXIT STATUS" not in top, "kssim --help must not repeat compare's help")
    version = ctx.ok("--version")
    ctx.check(version.startswith("kssim "), "--version: %r" % version)


# ------------------------------------------------------------------------------------------------------------
# samples: the README's main job on the committed sample images, and their generator.
def group_samples(ctx):
    sample_dir = os.path.join(ctx.source_dir, "src", "cli", "samples")
    ref, dist = os.path.join(sample_dir, "reference.png"), os.path.join(sample_dir, "distorted.png")
    cwd = ctx.fresh_dir("main_job")
    out = ctx.ok("compare", ref, dist, "--map", "ssim_map.png", cwd=cwd)
    lines = out.splitlines()
    ctx.check(len(lines) == 1 and 0.3 < float(lines[0]) < 0.95, "sample SSIM %r" % out)
    ihdr = read_chunks(open(os.path.join(cwd, "ssim_map.png"), "rb").read())[0][1]
    ctx.check(struct.unpack(">II", ihdr[:8]) == (3 * 246 + 4, 182), "sample map size")
    # The generator reproduces the committed pixels.
    gen = ctx.fresh_dir("regenerated")
    subprocess.run([sys.executable, os.path.join(sample_dir, "make_samples.py"), gen], check=True,
                   capture_output=True)
    for name in ("reference.png", "distorted.png"):
        committed = decode_png(open(os.path.join(sample_dir, name), "rb").read())[0]
        fresh = decode_png(open(os.path.join(gen, name), "rb").read())[0]
        ctx.check(committed.shape == (192, 256, 3), "%s must be 256x192 RGB" % name)
        # Exact in practice; a last-ulp difference of a vectorised NumPy function on another CPU could move a
        # rare pixel across a rounding boundary, which is tolerated.
        diff = np.abs(committed.astype(int) - fresh.astype(int)) if committed.shape == fresh.shape else None
        ctx.check(diff is not None and diff.max() <= 1 and np.count_nonzero(diff) <= 16,
                  "make_samples.py must reproduce %s" % name)

# ------------------------------------------------------------------------------------------------------------
# formats: JPEG, TIFF, WebP (written by Pillow), OpenEXR and PFM (float_codecs.py), stdin, gray palettes,
# and the "alpha": "ignored" note; each loads exactly like the equivalent array.
def pil_bytes(ctx, name, samples, **save):
    p = ctx.path(name)
    Image.fromarray(samples).save(p, **save)
    return p


def pil_samples(path):
    return np.asarray(Image.open(path))


def group_formats(ctx):
    g = rng(71)
    h, w = 21, 23
    base = g.integers(0, 256, size=(h, w, 3)).astype(np.uint8)
    other = np.clip(base.astype(int) + g.integers(-40, 40, size=base.shape), 0, 255).astype(np.uint8)
    # JPEG: kssim's samples are libjpeg-turbo's, as Pillow decodes them.
    for mode, tag in (("RGB", "color"), ("L", "gray")):
        sa = base if mode == "RGB" else base[..., 0]
        sb = other if mode == "RGB" else other[..., 0]
        fa = pil_bytes(ctx, "ja.jpg", sa, quality=70)
        fb = pil_bytes(ctx, "jb.jpg", sb, quality=40)
        compare_with_arrays(ctx, "JPEG %s" % tag, fa, fb, image_as_array(pil_samples(fa), 255, False),
                            image_as_array(pil_samples(fb), 255, False), "jpeg")
    # TIFF: 8-bit gray/RGB/RGBA, 16-bit gray, 32-bit float, several compressions.
    for compression in (None, "tiff_lzw", "tiff_adobe_deflate", "packbits"):
        kw = {"compression": compression} if compression else {}
        fa = pil_bytes(ctx, "ta.tif", base, **kw)
        fb = pil_bytes(ctx, "tb.tif", other, **kw)
        compare_with_arrays(ctx, "TIFF RGB %s" % compression, fa, fb, image_as_array(base, 255, False),
                            image_as_array(other, 255, False), "tiff")
    fa = pil_bytes(ctx, "ta_gray.tif", base[..., 1])
    fb = pil_bytes(ctx, "tb_gray.tif", other[..., 1])
    compare_with_arrays(ctx, "TIFF gray", fa, fb, image_as_array(base[..., 1], 255, False),
                        image_as_array(other[..., 1], 255, False), "tiff")
    alpha = g.integers(0, 256, size=(h, w, 1)).astype(np.uint8)
    fa = pil_bytes(ctx, "ta_rgba.tif", np.concatenate([base, alpha], 2))
    fb = pil_bytes(ctx, "tb_rgba.tif", np.concatenate([other, 255 - alpha], 2))
    compare_with_arrays(ctx, "TIFF RGBA", fa, fb, image_as_array(base, 255, False), image_as_array(other, 255, False),
                        "tiff")
    j = ctx.ok_json("compare", fa, fb)
    ctx.check(j.get("inputs", {}).get("a", {}).get("alpha") == "ignored", "TIFF RGBA: alpha ignored in JSON: %r" % j)
    s16a = g.integers(0, 65536, size=(h, w)).astype(np.uint16)
    s16b = np.clip(s16a.astype(int) + g.integers(-4000, 4000, size=s16a.shape), 0, 65535).astype(np.uint16)
    fa, fb = pil_bytes(ctx, "t16a.tif", s16a), pil_bytes(ctx, "t16b.tif", s16b)
    compare_with_arrays(ctx, "TIFF 16-bit gray", fa, fb, image_as_array(s16a, 65535, False),
                        image_as_array(s16b, 65535, False), "tiff")
    fa_f = g.random((h, w)).astype(np.float32) * 4.0
    fb_f = np.clip(fa_f + 0.2 * g.standard_normal(fa_f.shape), 0, 4).astype(np.float32)
    ta, tb = pil_bytes(ctx, "tfa.tif", fa_f), pil_bytes(ctx, "tfb.tif", fb_f)
    na, nb = ctx.save_npy("tfa.npy", fa_f[None, None]), ctx.save_npy("tfb.npy", fb_f[None, None])
    j_t = ctx.ok_json("compare", ta, tb, "--data-range", 4, "--window", 7)
    j_n = ctx.ok_json("compare", na, nb, "--data-range", 4, "--window", 7)
    ctx.check(j_t.get("ssim") == j_n.get("ssim") and j_t.get("shape") == [1, 1, h, w],
              "float TIFF keeps its values: %r vs %r" % (j_t.get("ssim"), j_n.get("ssim")))
    # WebP: lossless equals the PNG; lossy equals what libwebp (through Pillow) decodes.
    fa = pil_bytes(ctx, "wa.webp", base, lossless=True)
    fb = pil_bytes(ctx, "wb.webp", other, lossless=True)
    compare_with_arrays(ctx, "WebP lossless", fa, fb, image_as_array(base, 255, False),
                        image_as_array(other, 255, False), "webp")
    fa = pil_bytes(ctx, "wa_lossy.webp", base, quality=60)
    fb = pil_bytes(ctx, "wb_lossy.webp", np.concatenate([other, alpha], 2), quality=60)
    j = ctx.ok_json("compare", fa, fb)
    ctx.check(j.get("inputs", {}).get("b", {}).get("alpha") == "ignored" and "alpha" not in j["inputs"]["a"],
              "WebP alpha note: %r" % j.get("inputs"))
    compare_with_arrays(ctx, "WebP lossy", fa, ctx.save_bytes("wb_rgb.png", encode_png(pil_samples(fb)[..., :3])),
                        image_as_array(pil_samples(fa), 255, False), image_as_array(pil_samples(fb)[..., :3], 255, False),
                        "webp")
    # OpenEXR (float and half, RGB and Y, + A) and PFM (RGB, gray, either byte order): values as stored.
    fa3 = g.random((h, w, 3)).astype(np.float32)
    fb3 = np.clip(fa3 + 0.1 * g.standard_normal(fa3.shape), 0, 1).astype(np.float32)
    chw = lambda x: (x.transpose(2, 0, 1) if x.ndim == 3 else x[None])[None]  # noqa: E731
    for half in (False, True):
        ea = ctx.save_bytes("ea.exr", exr_bytes({"R": fa3[..., 0], "G": fa3[..., 1], "B": fa3[..., 2]}, half))
        eb = ctx.save_bytes("eb.exr", exr_bytes({"R": fb3[..., 0], "G": fb3[..., 1], "B": fb3[..., 2],
                                                 "A": np.ones((h, w))}, half))
        ra, rb = (fa3.astype(np.float16).astype(np.float32), fb3.astype(np.float16).astype(np.float32)) if half \
            else (fa3, fb3)
        compare_with_arrays(ctx, "OpenEXR RGB %s" % ("half" if half else "float"), ea, eb, chw(ra), chw(rb), "exr")
    ya = ctx.save_bytes("ya.exr", exr_bytes({"Y": fa3[..., 0]}))
    yb = ctx.save_bytes("yb.exr", exr_bytes({"Y": fb3[..., 0]}))
    compare_with_arrays(ctx, "OpenEXR Y", ya, yb, chw(fa3[..., 0]), chw(fb3[..., 0]), "exr")
    for little in (True, False):
        pa = ctx.save_bytes("pa.pfm", pfm_bytes(fa3, little))
        pb = ctx.save_bytes("pb.pfm", pfm_bytes(fb3, little))
        compare_with_arrays(ctx, "PFM RGB %s" % ("LE" if little else "BE"), pa, pb, chw(fa3), chw(fb3), "pfm")
    pa = ctx.save_bytes("pa1.pfm", pfm_bytes(fa3[..., 2]))
    pb = ctx.save_bytes("pb1.pfm", pfm_bytes(fb3[..., 2]))
    compare_with_arrays(ctx, "PFM gray", pa, pb, chw(fa3[..., 2]), chw(fb3[..., 2]), "pfm")
    # '-' reads the standard input, as A or as B.
    fa = ctx.save_bytes("sa.png", encode_png(base))
    fb = ctx.save_bytes("sb.png", encode_png(other))
    direct = ctx.ok("compare", fa, fb)
    ctx.check(ctx.ok("compare", "-", fb, stdin=open(fa, "rb").read()) == direct, "A from stdin")
    ctx.check(ctx.ok("compare", fa, "-", stdin=open(fb, "rb").read()) == direct, "B from stdin")
    j = ctx.ok_json("compare", "-", fb, stdin=open(fa, "rb").read())
    ctx.check(j.get("inputs", {}).get("a", {}).get("path") == "-", "stdin path in JSON")
    ctx.fails("empty stdin", "compare", "-", fb, stdin=b"")
    # A palette whose colours are all gray loads as one channel, equal to the gray image.
    gray_palette = np.repeat(np.arange(0, 256, 17)[:, None], 3, 1)
    ia, ib = g.integers(0, 16, size=(h, w)), g.integers(0, 16, size=(h, w))
    pa = ctx.save_bytes("gp_a.png", encode_png(ia, 8, color_type=3, palette=gray_palette))
    pb = ctx.save_bytes("gp_b.png", encode_png(ib, 8, color_type=3, palette=gray_palette))
    compare_with_arrays(ctx, "PNG gray palette", pa, pb, image_as_array(ia * 17, 255, False),
                        image_as_array(ib * 17, 255, False), "png")
    # RGB PNG: no alpha note; RGBA: "ignored".
    j = ctx.ok_json("compare", fa, ctx.save_bytes("sb_rgba.png", encode_png(np.concatenate([other, alpha], 2))))
    ctx.check("alpha" not in j["inputs"]["a"] and j["inputs"]["b"].get("alpha") == "ignored", "PNG alpha note %r" % j)

    # Bad files of the new formats: the error contract.
    d = ctx.fresh_dir("formats_err")
    ref_png = ctx.save_bytes("ref.png", encode_png(base))
    bad = lambda label, data: ctx.fails(label, "compare", ctx.save_bytes("bad.bin", data), ref_png,  # noqa: E731
                                        "--map", os.path.join(d, "m.png"), out_dir=d)
    jpeg = open(pil_bytes(ctx, "good.jpg", base), "rb").read()
    bad("truncated JPEG", jpeg[: len(jpeg) // 2])
    bad("JPEG without its end", jpeg[:-2] + b"\0\0")
    Image.fromarray(base).convert("CMYK").save(ctx.path("cmyk.jpg"))
    bad("CMYK JPEG", open(ctx.path("cmyk.jpg"), "rb").read())
    tif = open(pil_bytes(ctx, "good.tif", base), "rb").read()
    bad("truncated TIFF", tif[: len(tif) // 2])
    frames = [Image.fromarray(base), Image.fromarray(other)]
    frames[0].save(ctx.path("pages.tif"), save_all=True, append_images=frames[1:])
    bad("multi-page TIFF", open(ctx.path("pages.tif"), "rb").read())
    Image.fromarray(base).convert("P").save(ctx.path("pal.tif"))
    bad("palette TIFF", open(ctx.path("pal.tif"), "rb").read())
    Image.fromarray(base[..., 0] > 128).save(ctx.path("bits.tif"))
    bad("1-bit TIFF", open(ctx.path("bits.tif"), "rb").read())
    webp = open(pil_bytes(ctx, "good.webp", base, quality=50), "rb").read()
    bad("truncated WebP", webp[: len(webp) // 2])
    bad("corrupt WebP frame start code", webp[:23] + b"\0\0\0" + webp[26:])  # VP8's 9d 01 2a
    exr = exr_bytes({"R": fa3[..., 0], "G": fa3[..., 1], "B": fa3[..., 2]})
    bad("truncated OpenEXR", exr[: len(exr) - 100])
    bad("OpenEXR without colour channels", exr_bytes({"Z": fa3[..., 0]}))
    pfm = pfm_bytes(fa3)
    bad("truncated PFM", pfm[:-1])
    bad("PFM with trailing bytes", pfm + b"\0")
    bad("PFM with a zero scale", pfm.replace(b"-1.0", b"0.0"))
    bad("PFM with a bad size", b"PF\n0 3\n-1.0\n")


# ------------------------------------------------------------------------------------------------------------
# channels: --channel-axis first|last and the refusal of ambiguous shapes.
def group_channels(ctx):
    d = ctx.fresh_dir("chan_out")
    a, b = pair((2, 3, 20, 22), np.float64, seed=81)
    hwc_a, hwc_b = a[0].transpose(1, 2, 0).copy(), b[0].transpose(1, 2, 0).copy()  # (H, W, 3)
    pa, pb = ctx.save_npy("hwc_a.npy", hwc_a), ctx.save_npy("hwc_b.npy", hwc_b)
    ref = ctx.ok_json("compare", ctx.save_npy("chw_a.npy", a[0]), ctx.save_npy("chw_b.npy", b[0]), "--per-channel")
    err = ctx.fails("ambiguous (H, W, 3)", "compare", pa, pb, "--map", os.path.join(d, "m.npy"), out_dir=d)
    ctx.check("--channel-axis" in err, "the ambiguity error must name --channel-axis: %r" % err)
    m, ga = ctx.path("hwc_map.npy"), ctx.path("hwc_ga.npy")
    j = ctx.ok_json("compare", pa, pb, "--channel-axis", "last", "--map", m, "--grad-a", ga, "--per-channel")
    ctx.check(j.get("ssim") == ref.get("ssim"), "channel-last SSIM %r vs channel-first %r" % (j.get("ssim"), ref.get("ssim")))
    ctx.check(j.get("per_channel") == ref.get("per_channel"), "per-channel means must follow the channels")
    ctx.check(j.get("shape") == [20, 22, 3] and j.get("channel_axis") == "last", "JSON shape %r" % j.get("shape"))
    ctx.check(j.get("map_shape") == [10, 12, 3], "channel-last map_shape %r" % j.get("map_shape"))
    ref_map = ssim_map(a[:1], b[:1])[0].transpose(1, 2, 0)
    got = np.load(m)
    ctx.check(got.shape == ref_map.shape and close(got, ref_map, 1e-10), "channel-last map file")
    ctx.check(np.load(ga).shape == hwc_a.shape, "channel-last gradient shape %s" % (np.load(ga).shape,))
    # (N, H, W, C).
    nhwc_a, nhwc_b = a.transpose(0, 2, 3, 1).copy(), b.transpose(0, 2, 3, 1).copy()
    j = ctx.ok_json("compare", ctx.save_npy("nhwc_a.npy", nhwc_a), ctx.save_npy("nhwc_b.npy", nhwc_b), "--channel-axis", "last")
    full = ctx.ok_json("compare", ctx.save_npy("nchw_a.npy", a), ctx.save_npy("nchw_b.npy", b))
    ctx.check(j.get("ssim") == full.get("ssim"), "(N, H, W, C) with --channel-axis last")
    # Volumes: (D, H, W, C) with --dims 3.
    va, vb = pair((2, 9, 10, 11), np.float64, seed=82)
    j3 = ctx.ok_json("compare", ctx.save_npy("dhwc_a.npy", va.transpose(1, 2, 3, 0).copy()),
                     ctx.save_npy("dhwc_b.npy", vb.transpose(1, 2, 3, 0).copy()), "--dims", 3, "--window", 3,
                     "--channel-axis", "last")
    r3 = ctx.ok_json("compare", ctx.save_npy("cdhw_a.npy", va), ctx.save_npy("cdhw_b.npy", vb), "--dims", 3,
                     "--window", 3)
    ctx.check(j3.get("ssim") == r3.get("ssim"), "(D, H, W, C) with --dims 3 --channel-axis last")
    # --channel-axis first reads an ambiguous shape as kssim's own layout.
    amb_a, amb_b = pair((12, 20, 3), np.float64, seed=83)
    j = ctx.ok_json("compare", ctx.save_npy("amb_a.npy", amb_a), ctx.save_npy("amb_b.npy", amb_b), "--channel-axis",
                    "first", "--padding", "same", "--window", 3)
    ctx.check(j.get("channel_axis") == "first" and j.get("map_shape") == [12, 20, 3], "explicit first %r" % j)
    # Unambiguous shapes need no option; (H, W) has no channel axis either way.
    ctx.ok("compare", ctx.save_npy("c3.npy", a[0]), ctx.save_npy("c3b.npy", b[0]))
    hw = ctx.save_npy("hw.npy", a[0, 0])
    ctx.check(ctx.ok("compare", hw, hw, "--channel-axis", "last") == ctx.ok("compare", hw, hw), "(H, W) ignores the option")
    # The PNG of the same picture and the channel-last array give the same SSIM.
    img_a = np.round(hwc_a * 255).astype(np.uint8)
    img_b = np.round(hwc_b * 255).astype(np.uint8)
    arr_a = ctx.save_npy("img_hwc_a.npy", (img_a.astype(np.float64) / 255).astype(np.float32))
    arr_b = ctx.save_npy("img_hwc_b.npy", (img_b.astype(np.float64) / 255).astype(np.float32))
    ctx.check(ctx.ok("compare", arr_a, arr_b, "--channel-axis", "last") ==
              ctx.ok("compare", ctx.save_bytes("img_a.png", encode_png(img_a)), ctx.save_bytes("img_b.png", encode_png(img_b))),
              "PNG and channel-last array agree")
    ctx.check(ctx.ok("compare", ctx.path("img_a.png"), arr_b, "--channel-axis", "last") ==
              ctx.ok("compare", ctx.path("img_a.png"), ctx.path("img_b.png")), "a PNG against a channel-last array")
    ctx.fails("a PNG against an (H, W, 3) array without --channel-axis", "compare", ctx.path("img_a.png"), arr_b)
    ctx.fails("bad --channel-axis", "compare", pa, pb, "--channel-axis", "middle")


# ------------------------------------------------------------------------------------------------------------
# status: --threshold and exit status 1, NaN results, outputs that are inputs, data-range warnings.
def group_status(ctx):
    a, b = pair((1, 1, 24, 24), np.float32, seed=91)
    pa, pb = ctx.save_npy("sa.npy", a), ctx.save_npy("sb.npy", b)
    value = float(ctx.ok("compare", pa, pb))
    for t, code in ((value + 0.01, 1), (value, 0), (value - 0.01, 0)):
        rc, out, err = ctx.run("compare", pa, pb, "--threshold", repr(t))
        ctx.check(rc == code and float(out) == value and err == "", "--threshold %r: status %d (expected %d), %r %r" % (t, rc, code, out, err))
    rc, out, err = ctx.run("compare", pa, pb, "--threshold", repr(value + 0.01), "--json")
    j = json.loads(out) if rc == 1 else {}
    ctx.check(rc == 1 and j.get("below_threshold") is True and j.get("threshold") == value + 0.01, "JSON threshold %r" % out)
    d = ctx.fresh_dir("status_out")
    m = os.path.join(d, "m.npy")
    rc, out, err = ctx.run("compare", pa, pb, "--threshold", 2, "--map", m)
    ctx.check(rc == 1 and os.path.exists(m), "below the threshold the files are still written")
    ctx.fails("NaN threshold", "compare", pa, pb, "--threshold", "nan")
    # A NaN SSIM from finite inputs is an error that names the cause.
    flat = ctx.save_npy("flat.npy", np.full((16, 16), 0.5, np.float32))
    err = ctx.fails("NaN result with --k2 0", "compare", flat, flat, "--k2", 0)
    ctx.check("--k2" in err and "NaN" in err, "NaN message %r" % err)
    # Outputs that are inputs: by the same path, another spelling, a symbolic or a hard link.
    keep = open(pa, "rb").read()
    for label, path in (("same path", pa), ("other spelling", os.path.join(ctx.workdir, ".", "sa.npy"))):
        ctx.fails("--map is input A (%s)" % label, "compare", pa, pb, "--map", path)
        ctx.check(open(pa, "rb").read() == keep, "input A overwritten (%s)" % label)
    link = ctx.path("link_to_b.npy")
    os.symlink(pb, link)
    ctx.fails("--grad-a is input B through a symbolic link", "compare", pa, pb, "--grad-a", link)
    hard = ctx.path("hard_a.npy")
    os.link(pa, hard)
    ctx.fails("--grad-b is a hard link of input A", "compare", pa, pb, "--grad-b", hard)
    ctx.check(open(pa, "rb").read() == keep, "input A must be untouched")
    # Data range: a warning on stderr (one line), the result still printed, status 0.
    big_a, big_b = (a * 255).astype(np.float32), (b * 255).astype(np.float32)
    qa, qb = ctx.save_npy("big_a.npy", big_a), ctx.save_npy("big_b.npy", big_b)
    rc, out, err = ctx.run("compare", qa, qb)
    lines = err.splitlines()
    ctx.check(rc == 0 and out and len(lines) == 2 and all(l.startswith("kssim: warning:") for l in lines) and
              "--data-range" in err, "values above the data range must warn once per input: %r" % err)
    ctx.ok("compare", qa, qb, "--data-range", 255)
    tiny = ctx.save_npy("tiny.npy", (a * 0.01).astype(np.float32))
    rc, out, err = ctx.run("compare", tiny, tiny)
    ctx.check(rc == 0 and err.startswith("kssim: warning:") and "far below" in err, "tiny span must warn: %r" % err)
    dark = ctx.save_bytes("dark.png", encode_png(np.full((16, 16), 3, np.uint8)))
    ctx.ok("compare", dark, dark)  # integer images are normalised: no "far below" warning


# ------------------------------------------------------------------------------------------------------------
# many: kssim compare REF D1 D2 ... (one result per pair, REF's statistics reused) and --per-channel.
def group_many(ctx):
    ref, _ = pair((1, 3, 30, 28), np.float32, seed=101)
    pref = ctx.save_npy("ref.npy", ref)
    ds = []
    for k in range(4):
        _, dk = pair((1, 3, 30, 28), np.float32, seed=101, noise=0.05 * (k + 1))
        ds.append(ctx.save_npy("d%d.npy" % k, dk))
    singles = [ctx.ok("compare", pref, dk).strip() for dk in ds]
    lines = ctx.ok("compare", pref, *ds).splitlines()
    ctx.check(lines == ["%s  %s" % (v, dk) for v, dk in zip(singles, ds)], "one '<ssim>  <path>' line per pair: %r" % lines)
    out = ctx.ok("compare", pref, *ds, "--json", "--per-image")
    objs = [json.loads(l) for l in out.splitlines()]
    ctx.check([o["inputs"]["b"]["path"] for o in objs] == ds, "one JSON object per line, in order")
    ctx.check([repr(o["ssim"]) for o in objs] == [repr(float(v)) for v in singles], "JSON values equal single runs")
    # The same file twice, and stdin among them.
    twice = ctx.ok("compare", pref, ds[0], ds[0]).splitlines()
    ctx.check(len(twice) == 2 and twice[0] == twice[1], "repeated B")
    mixed = ctx.ok("compare", pref, ds[1], "-", stdin=open(ds[2], "rb").read()).splitlines()
    ctx.check(mixed == ["%s  %s" % (singles[1], ds[1]), "%s  -" % singles[2]], "stdin among the B: %r" % mixed)
    # A bad B anywhere: nothing printed at all. A shape mismatch is found from the headers.
    d = ctx.fresh_dir("many_err")
    ctx.fails("corrupt last B", "compare", pref, ds[0], ds[1], ctx.save_bytes("bad.npy", open(ds[2], "rb").read()[:-8]))
    ctx.fails("wrong shape among B", "compare", pref, ds[0], ctx.save_npy("small.npy", ref[:, :, :20]), ds[1], out_dir=d)
    # Threshold over several pairs: status 1 when any is below.
    rc, out, _ = ctx.run("compare", pref, *ds, "--threshold", repr(float(singles[-1]) + 1e-9))
    ctx.check(rc == 1 and len(out.splitlines()) == 4, "status 1 when the last pair is below: %d" % rc)
    # --per-channel: means of each channel's map; their mean is the per-image mean.
    a, b = pair((2, 3, 20, 21), np.float64, seed=102)
    pa, pb = ctx.save_npy("pc_a.npy", a), ctx.save_npy("pc_b.npy", b)
    j = ctx.ok_json("compare", pa, pb, "--per-channel", "--per-image")
    expect = ssim_map(a, b).mean(axis=(2, 3))
    got = np.array(j.get("per_channel", []))
    ctx.check(got.shape == (2, 3) and close(got, expect, 1e-10), "per_channel %r vs %r" % (got, expect))
    ctx.check(got.shape == (2, 3) and close(got.mean(axis=1), j["per_image"], 1e-12), "per-channel means average to per-image")
    plain = ctx.ok("compare", pa, pb, "--per-channel").splitlines()
    ctx.check(len(plain) == 7 and plain[1].startswith("image 0 channel 0: ") and plain[6].startswith("image 1 channel 2: "),
              "plain per-channel lines %r" % plain)
    one = ctx.ok("compare", ctx.save_npy("pc1_a.npy", a[:1]), ctx.save_npy("pc1_b.npy", b[:1]), "--per-channel").splitlines()
    ctx.check(len(one) == 4 and one[1].startswith("channel 0: "), "single image per-channel lines %r" % one)


# ------------------------------------------------------------------------------------------------------------
# cheap: shapes are compared from the headers before anything is decoded (a huge PNG fails at once).
def group_cheap(ctx):
    side = 16384  # 2^28 gray samples: decoding would allocate 1.5 GB and take seconds
    z = zlib.compressobj(9)
    row = b"\0" * (side + 1)
    data = b"".join(z.compress(row) for _ in range(side)) + z.flush()
    big = ctx.save_bytes("big.png", b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)) +
                         chunk(b"IDAT", data) + chunk(b"IEND", b""))
    small = ctx.save_bytes("small.png", encode_png(np.zeros((64, 64), np.uint8)))
    for args in ((big, small), (small, big)):
        start = time.monotonic()
        err = ctx.fails("huge PNG against a small one", "compare", *args)
        elapsed = time.monotonic() - start
        ctx.check("same shape" in err and elapsed < 3, "shape mismatch must be found from the header (%.1f s): %r" % (elapsed, err))


# ------------------------------------------------------------------------------------------------------------
# mapextras: --map-channels mean, --map-legend, and the map PNG written fast.
def group_mapextras(ctx):
    a, b = pair((1, 3, 26, 30), np.float64, seed=111, noise=0.4)
    pa, pb = ctx.save_npy("xa.npy", a), ctx.save_npy("xb.npy", b)
    m_all, m_mean = ctx.path("all.npy"), ctx.path("mean.npy")
    ctx.ok("compare", pa, pb, "--map", m_all, "--window", 5)
    j = ctx.ok_json("compare", pa, pb, "--map", m_mean, "--map-channels", "mean", "--window", 5)
    full, mean = np.load(m_all), np.load(m_mean)
    ctx.check(mean.shape == (1, 1, 22, 26) and j.get("map_shape") == [1, 1, 22, 26], "mean map shape %s" % (mean.shape,))
    ctx.check(mean.shape == (1, 1, 22, 26) and close(mean[:, 0], full.mean(axis=1), 1e-12), "mean map values")
    png = ctx.path("mean.png")
    ctx.ok("compare", pa, pb, "--map", png, "--map-channels", "mean", "--window", 5)
    img, _, _, text = decode_png(open(png, "rb").read())
    ctx.check(img.shape == (22, 26, 3), "one tile for --map-channels mean: %s" % (img.shape,))
    ctx.check("(window - 1) / 2" in text.get("Description", "") and "x + 2" in text.get("Description", ""),
              "the Description says where a valid map sits: %r" % text.get("Description"))
    # The legend: a strip of 2 + 36 rows under the tiles, at least 200 pixels wide; the bar follows the colormap.
    leg = ctx.path("legend.png")
    ctx.ok("compare", pa, pb, "--map", leg, "--map-legend", "--window", 5)
    img = decode_png(open(leg, "rb").read())[0].astype(int)
    tiles_w = 3 * 26 + 2 * 2
    ctx.check(img.shape == (22 + 2 + 36, max(200, tiles_w), 3), "legend size %s" % (img.shape,))
    if img.shape[0] == 60:
        bar = img[22 + 2 + 6 + 6]  # the bar's middle row
        width = img.shape[1] - 24
        worst = max(np.abs(bar[12 + x] - np.array(colormap(x / (width - 1)))).max() for x in range(0, width, 7))
        ctx.check(worst <= 1, "legend bar differs from the colormap by %d" % worst)
        ctx.check((img[22:24] == 128).all(), "gutter between the tiles and the legend")
        ctx.check((img[22 + 2 + 6 + 12 + 6:, :] == 255).any(), "tick labels are drawn")
    d = ctx.fresh_dir("legend_err")
    ctx.fails("--map-legend without a PNG map", "compare", pa, pb, "--map-legend", "--map", os.path.join(d, "m.npy"), out_dir=d)
    ctx.fails("--map-legend without --map", "compare", pa, pb, "--map-legend")
    ctx.fails("bad --map-channels", "compare", pa, pb, "--map-channels", "max")
    # A large map PNG decodes to the same pixels as the default encoder would give (zlib stream in pieces).
    big_a, big_b = pair((1, 3, 700, 700), np.float32, seed=112, noise=0.3)
    qa, qb = ctx.save_npy("big_a.npy", big_a), ctx.save_npy("big_b.npy", big_b)
    mp, mn = ctx.path("big.png"), ctx.path("big.npy")
    ctx.ok("compare", qa, qb, "--map", mp)
    ctx.ok("compare", qa, qb, "--map", mn)
    img = decode_png(open(mp, "rb").read())[0]  # zlib.decompress checks the combined Adler-32
    values = np.load(mn)
    ctx.check(img.shape == (690, 3 * 690 + 4, 3), "big map size %s" % (img.shape,))
    if img.shape == (690, 2074, 3):
        for y, x in ((0, 0), (345, 100), (689, 689)):
            ctx.check(tuple(img[y, x]) == colormap(values[0, 0, y, x]) or
                      np.abs(np.array(img[y, x], int) - colormap(values[0, 0, y, x])).max() <= 1, "big map pixel (%d, %d)" % (y, x))


# ------------------------------------------------------------------------------------------------------------
# identical_inputs_give_exactly_one: issue #15 item 4, end to end. Needs the library change of MapFormula.hpp
# and LocalMoments.hpp (identical inputs give map pixels of exactly 1): fails until it is merged.
def group_identical_inputs_give_exactly_one(ctx):
    g = rng(121)
    y, x = np.mgrid[0:64, 0:80]
    photo = np.clip(128 + 90 * np.sin(x / 7.0) * np.cos(y / 11.0) + g.normal(0, 20, (64, 80)), 0, 255).astype(np.uint8)
    png = ctx.save_bytes("x.png", encode_png(photo))
    out = ctx.ok("compare", png, png)
    ctx.check(out == "1\n", "kssim compare x.png x.png must print exactly 1, got %r" % out)
    j = ctx.ok_json("compare", png, png)
    ctx.check(j.get("ssim") == 1.0, "JSON ssim of identical inputs must be 1.0, got %r" % j.get("ssim"))
    for dtype in (np.float32, np.float64):
        a, _ = pair((2, 3, 40, 36), dtype, seed=122)
        pa = ctx.save_npy("same_%s.npy" % np.dtype(dtype).name, a)
        m = ctx.path("same_map.npy")
        for padding in ("valid", "same"):
            out = ctx.ok("compare", pa, pa, "--padding", padding, "--map", m)
            ctx.check(out == "1\n", "%s %s: identical arrays must give exactly 1, got %r" % (np.dtype(dtype).name, padding, out))
            ctx.check((np.load(m) == 1).all(), "%s %s: every map pixel must be exactly 1" % (np.dtype(dtype).name, padding))


# ------------------------------------------------------------------------------------------------------------
# msssim: --metric ms-ssim against NumPy (ms_ssim_reference.py): values, per-image/-channel, JSON, gradients
# (central differences of the reference), volumes, and its errors.
def group_msssim(ctx):
    for dtype, atol in ((np.float64, 1e-10), (np.float32, 2e-5)):
        a, b = pair((2, 3, 40, 37), dtype, seed=200)
        pa, pb = ctx.save_npy("msa.npy", a), ctx.save_npy("msb.npy", b)
        j = ctx.ok_json("compare", pa, pb, "--metric", "ms-ssim", "--window", 3, "--sigma", 0.8, "--per-image",
                        "--per-channel")
        per = ms_ssim_per_channel(a, b, window=3, sigma=0.8)
        tag = np.dtype(dtype).name
        ctx.check(j.get("metric") == "ms-ssim" and "ssim" not in j and "map_shape" not in j,
                  "[%s] JSON metric fields: %r" % (tag, sorted(j)))
        ctx.check(j.get("scales") == 5 and j.get("weights") == [0.0448, 0.2856, 0.3001, 0.2363, 0.1333],
                  "[%s] JSON scales/weights %r %r" % (tag, j.get("scales"), j.get("weights")))
        ctx.check(abs(j.get("value", 9) - per.mean()) < atol, "[%s] value %r vs %r" % (tag, j.get("value"), per.mean()))
        ctx.check(close(j.get("per_image", []), per.mean(axis=1), atol), "[%s] per_image" % tag)
        ctx.check(close(j.get("per_channel", []), per, atol), "[%s] per_channel" % tag)
        plain = ctx.ok("compare", pa, pb, "--metric", "ms-ssim", "--window", 3, "--sigma", 0.8).splitlines()
        ctx.check(len(plain) == 1 and float(plain[0]) == j.get("value"), "[%s] plain output %r" % (tag, plain))
    # pytorch-msssim's defaults on the smallest image they accept, as PNG files (float32 after decoding).
    g = rng(201)
    img = (g.random((161, 170)) * 255).astype(np.uint8)
    noisy = np.clip(img + g.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
    pa, pb = ctx.save_bytes("msa.png", encode_png(img, 8)), ctx.save_bytes("msb.png", encode_png(noisy, 8))
    want = ms_ssim(img[None, None] / 255.0, noisy[None, None] / 255.0)
    got = float(ctx.ok("compare", pa, pb, "--metric", "ms-ssim"))
    ctx.check(abs(got - want) < 2e-5, "PNG, default options: %r vs %r" % (got, want))
    # Identical inputs: exactly 1.
    ctx.check(ctx.ok("compare", pa, pa, "--metric", "ms-ssim") == "1\n", "identical inputs must give exactly 1")
    # Volumes.
    a, b = pair((1, 1, 34, 36, 33), np.float64, seed=202)
    pa3, pb3 = ctx.save_npy("msa3.npy", a), ctx.save_npy("msb3.npy", b)
    got = float(ctx.ok("compare", pa3, pb3, "--metric", "ms-ssim", "--dims", 3, "--window", 3))
    want = ms_ssim(a, b, window=3, dims=3)
    ctx.check(abs(got - want) < 1e-10, "3D: %r vs %r" % (got, want))
    # Gradients against central differences of the reference.
    a, b = pair((1, 2, 36, 34), np.float64, seed=203)
    pa, pb = ctx.save_npy("msga.npy", a), ctx.save_npy("msgb.npy", b)
    ga, gb = ctx.path("ms_grad_a.npy"), ctx.path("ms_grad_b.npy")
    j = ctx.ok_json("compare", pa, pb, "--metric", "ms-ssim", "--window", 3, "--grad-a", ga, "--grad-b", gb)
    grad_a, grad_b = np.load(ga), np.load(gb)
    ctx.check(grad_a.shape == a.shape and grad_a.dtype == np.float64, "gradient shape %s" % (grad_a.shape,))
    check_central_differences(ctx, lambda x, y: ms_ssim(x, y, window=3), a, b, grad_a, grad_b, g, 6)
    # Errors: exit 2, one line, nothing written.
    d = ctx.fresh_dir("ms_err")
    small_a, small_b = pair((160, 200), np.float32, seed=204)
    sa, sb = ctx.save_npy("ms_small_a.npy", small_a), ctx.save_npy("ms_small_b.npy", small_b)
    err = ctx.fails("too small", "compare", sa, sb, "--metric", "ms-ssim", out_dir=d)
    ctx.check("> 160" in err, "the size error names the bound: %r" % err)
    ctx.ok("compare", sa, sb, "--metric", "ms-ssim", "--window", 7)  # (7 - 1) * 16 = 96 < 160
    ctx.fails("unknown metric", "compare", pa, pb, "--metric", "psnr", out_dir=d)
    ctx.fails("ms-ssim --map", "compare", pa, pb, "--metric", "ms-ssim", "--window", 3, "--map",
              os.path.join(d, "m.npy"), out_dir=d)
    for padding in ("same", "reflect", "replicate"):
        err = ctx.fails("ms-ssim " + padding, "compare", pa, pb, "--metric", "ms-ssim", "--window", 3, "--padding",
                        padding, out_dir=d)
        ctx.check("--padding " + padding in err, "ms-ssim %s: %r" % (padding, err))
    ctx.fails("ms-ssim --mask", "compare", pa, pb, "--metric", "ms-ssim", "--window", 3, "--mask", pa, out_dir=d)


# ------------------------------------------------------------------------------------------------------------
# masks: --mask / --mask-mode against NumPy (ms_ssim_reference.py): both modes and paddings, broadcast masks,
# PNG masks, maps, per-image/-channel, JSON, gradients, and the errors.
def region(shape, seed):
    """An irregular 0/1 region with fractional edges and a few stray 0s and 1s, shape (..., H, W)."""
    g = rng(seed)
    h, w = shape[-2:]
    yy, xx = np.mgrid[0:h, 0:w]
    dist = np.hypot(yy - h * (0.3 + 0.4 * g.random()), xx - w * (0.3 + 0.4 * g.random())) - 0.3 * min(h, w)
    m = np.clip(0.5 - 0.5 * dist, 0, 1)
    m = np.broadcast_to(m, shape).copy()
    coin = g.random(shape)
    m[coin < 0.03] = 0
    m[coin > 0.98] = 1
    return m


def group_masks(ctx):
    a, b = pair((2, 3, 30, 27), np.float64, seed=300)
    pa, pb = ctx.save_npy("mka.npy", a), ctx.save_npy("mkb.npy", b)
    masks = {"(N, 1, H, W)": region((2, 1, 30, 27), 301), "(N, C, H, W)": region((2, 3, 30, 27), 302),
             "(H, W)": region((30, 27), 303)}
    for name, mask in masks.items():
        pm = ctx.save_npy("mk_mask.npy", mask)
        for mode in ("weights", "normalized"):
            # Normalized convolution takes valid and same padding only (an error below).
            for padding in PADDINGS if mode == "weights" else ("valid", "same"):
                tag = "%s %s %s" % (name, mode, padding)
                m = ctx.path("mk_map.npy")
                j = ctx.ok_json("compare", pa, pb, "--mask", pm, "--mask-mode", mode, "--padding", padding,
                                "--per-image", "--per-channel", "--map", m)
                full = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
                ref_map, w = masked_ssim_parts(a, b, full, mode=mode, padding=padding)
                want = (w * ref_map).sum() / w.sum()
                ctx.check(abs(j.get("value", 9) - want) < 1e-10 and j.get("ssim") == j.get("value"),
                          "[%s] value %r vs %r" % (tag, j.get("value"), want))
                ctx.check(j.get("metric") == "ssim" and j.get("mask", {}).get("mode") == mode and
                          j.get("mask", {}).get("path") == pm and j.get("mask", {}).get("shape") == list(mask.shape),
                          "[%s] JSON mask %r" % (tag, j.get("mask")))
                got = np.load(m)
                ctx.check(got.shape == ref_map.shape and close(got, ref_map, 1e-10), "[%s] map" % tag)
                per_image = (w * ref_map).reshape(2, -1).sum(axis=1) / w.reshape(2, -1).sum(axis=1)
                per_channel = (w * ref_map).reshape(2, 3, -1).sum(axis=2) / w.reshape(2, 3, -1).sum(axis=2)
                ctx.check(close(j.get("per_image", []), per_image, 1e-10), "[%s] per_image" % tag)
                ctx.check(close(j.get("per_channel", []), per_channel, 1e-10), "[%s] per_channel" % tag)
    # The default mode is weights; a mask of ones gives SSIM.
    pm = ctx.save_npy("mk_ones.npy", np.ones((30, 27)))
    ctx.check(ctx.ok_json("compare", pa, pb, "--mask", pm)["mask"]["mode"] == "weights", "default --mask-mode")
    ones = float(ctx.ok("compare", pa, pb, "--mask", pm))
    ctx.check(abs(ones - ssim_map(a, b).mean()) < 1e-12, "a mask of ones gives SSIM: %r" % ones)
    # A PNG mask (8-bit gray, 255 = 1) on PNG inputs, float32 after decoding.
    g = rng(304)
    img = (g.random((40, 44)) * 255).astype(np.uint8)
    noisy = np.clip(img + g.normal(0, 15, img.shape), 0, 255).astype(np.uint8)
    mask8 = (region((40, 44), 305) * 255).round().astype(np.uint8)
    qa, qb = ctx.save_bytes("mk_a.png", encode_png(img, 8)), ctx.save_bytes("mk_b.png", encode_png(noisy, 8))
    qm = ctx.save_bytes("mk_m.png", encode_png(mask8, 8))
    for mode in ("weights", "normalized"):
        got = float(ctx.ok("compare", qa, qb, "--mask", qm, "--mask-mode", mode))
        want = masked_ssim(img[None, None] / 255.0, noisy[None, None] / 255.0, mask8[None, None] / 255.0, mode=mode)
        ctx.check(abs(got - want) < 2e-5, "PNG mask %s: %r vs %r" % (mode, got, want))
    # Gradients of the normalized mode against central differences of the reference.
    a2, b2 = pair((1, 2, 18, 17), np.float64, seed=306)
    mask2 = region((18, 17), 307)
    pa2, pb2, pm2 = ctx.save_npy("mkga.npy", a2), ctx.save_npy("mkgb.npy", b2), ctx.save_npy("mkgm.npy", mask2)
    ga, gb = ctx.path("mk_grad_a.npy"), ctx.path("mk_grad_b.npy")
    ctx.ok("compare", pa2, pb2, "--mask", pm2, "--mask-mode", "normalized", "--window", 7, "--grad-a", ga, "--grad-b", gb)
    grad_a, grad_b = np.load(ga), np.load(gb)
    f = lambda x, y: masked_ssim(x, y, mask2[None, None], mode="normalized", window=7)  # noqa: E731
    check_central_differences(ctx, f, a2, b2, grad_a, grad_b, g, 8)
    # Errors: exit 2, one line, nothing written.
    d = ctx.fresh_dir("mk_err")
    outs = ["--map", os.path.join(d, "m.npy"), "--grad-a", os.path.join(d, "ga.npy")]
    np.save(os.path.join(d, "m.npy"), np.ones((30, 27)))  # a valid mask where --map would write
    bad_shape = ctx.save_npy("mk_bad_shape.npy", np.ones((30, 26)))
    two_channels = ctx.save_npy("mk_two.npy", np.ones((2, 30, 27)))
    above = ctx.save_npy("mk_above.npy", np.full((30, 27), 1.5))
    below = ctx.save_npy("mk_below.npy", np.full((30, 27), -0.25))
    nan = np.ones((30, 27))
    nan[3, 4] = np.nan
    with_nan = ctx.save_npy("mk_nan.npy", nan)
    zeros_at_centres = np.zeros((30, 27))
    zeros_at_centres[:5, :] = 1  # only the border the valid windows' centres never reach
    border = ctx.save_npy("mk_border.npy", zeros_at_centres)
    for label, args in (("mask shape", ["--mask", bad_shape]), ("mask channels", ["--mask", two_channels]),
                        ("mask above 1", ["--mask", above]), ("mask below 0", ["--mask", below]),
                        ("mask NaN", ["--mask", with_nan]), ("mask weight 0 at every centre", ["--mask", border]),
                        ("missing mask file", ["--mask", ctx.path("no_such_mask.npy")]),
                        ("--mask-mode without --mask", ["--mask-mode", "weights"]),
                        ("unknown --mask-mode", ["--mask", pm, "--mask-mode", "soft"]),
                        ("normalized with reflect", ["--mask", pm, "--mask-mode", "normalized", "--padding", "reflect"]),
                        ("normalized with replicate",
                         ["--mask", pm, "--mask-mode", "normalized", "--padding", "replicate"]),
                        ("mask is an output", ["--mask", os.path.join(d, "m.npy")])):
        err = ctx.fails(label, "compare", pa, pb, *args, *outs, out_dir=d)
        if label == "mask above 1":
            ctx.check("[0, 1]" in err, "the value error names the range: %r" % err)


# ------------------------------------------------------------------------------------------------------------
# float16: '<f2' arrays are widened to float32 as they are read (exactly), then computed and written as
# float32: the same results, bit for bit, as float32 files of the same values; against the NumPy reference of
# those values; the JSON names the stored dtype; mixed float16 / float32 pairs are refused.
def group_float16(ctx):
    for dims, shape, window in ((2, (2, 3, 24, 31), 11), (3, (1, 2, 12, 13, 14), 5)):
        a, b = pair(shape, np.float16, seed=40 + dims)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        unrounded = pair(shape, np.float64, seed=40 + dims)
        for padding in ("valid", "same"):
            tag = "%dD %s" % (dims, padding)
            args = ["--dims", dims, "--window", window, "--padding", padding]
            m16, m32 = ctx.path("h16map.npy"), ctx.path("h32map.npy")
            g16, g32 = ctx.path("h16grad.npy"), ctx.path("h32grad.npy")
            j16 = ctx.ok_json("compare", ctx.save_npy("h16a.npy", a), ctx.save_npy("h16b.npy", b), *args,
                              "--map", m16, "--grad-a", g16)
            j32 = ctx.ok_json("compare", ctx.save_npy("h32a.npy", a32), ctx.save_npy("h32b.npy", b32), *args,
                              "--map", m32, "--grad-a", g32)
            ctx.check(j16["ssim"] == j32["ssim"], "float16 %s: %r differs from float32 of its values %r"
                      % (tag, j16["ssim"], j32["ssim"]))
            ref = ssim_map(a32.astype(np.float64), b32.astype(np.float64), window=window, padding=padding, dims=dims)
            ctx.check(abs(j16["ssim"] - ref.mean()) < 2e-5, "float16 %s mean %r vs %r" % (tag, j16["ssim"], ref.mean()))
            got = np.load(m16)
            ctx.check(got.shape == ref.shape and close(got, ref, 2e-5), "float16 %s map against the reference" % tag)
            # The test can fail: the rounding to float16 moves map pixels by more than the bar (the mean hardly
            # moves: the rounding errors average out).
            moved = np.abs(ssim_map(*unrounded, window=window, padding=padding, dims=dims) - ref).max()
            ctx.check(moved > 4e-5, "float16 %s: rounding too small to test (%g)" % (tag, moved))
            ctx.check(j16["dtype"] == "float32" and j16["inputs"]["a"].get("stored_dtype") == "float16"
                      and "stored_dtype" not in j32["inputs"]["a"], "float16 %s JSON dtypes: %r" % (tag, j16))
            for name, x16, x32 in (("map", m16, m32), ("grad-a", g16, g32)):
                got16, got32 = np.load(x16), np.load(x32)
                ctx.check(got16.dtype == np.float32 and np.array_equal(got16, got32),
                          "float16 %s %s: %s, equal to float32's: %s" % (tag, name, got16.dtype,
                                                                         np.array_equal(got16, got32)))
    a, b = pair((1, 1, 16, 16), np.float16, seed=47)
    pa, pb32 = ctx.save_npy("h16a.npy", a), ctx.save_npy("h32b.npy", b.astype(np.float32))
    err = ctx.fails("float16 with float32", "compare", pa, pb32)
    ctx.check("float16" in err and "float32" in err, "the dtype error names both dtypes: %r" % err)
    ctx.check(float(ctx.ok("compare", pa, pa)) == 1.0, "SSIM of identical float16 arrays must be exactly 1")
    big_endian = ctx.save_npy("h16be.npy", a.astype(">f2"))
    ctx.fails("big-endian float16", "compare", big_endian, big_endian)


GROUPS = {
    "values": group_values,
    "grads": group_grads,
    "ranks": group_ranks,
    "png": group_png,
    "pnm": group_pnm,
    "json": group_json,
    "map": group_map,
    "errors": group_errors,
    "help": group_help,
    "samples": group_samples,
    "formats": group_formats,
    "channels": group_channels,
    "status": group_status,
    "many": group_many,
    "cheap": group_cheap,
    "mapextras": group_mapextras,
    "identical_inputs_give_exactly_one": group_identical_inputs_give_exactly_one,
    "msssim": group_msssim,
    "masks": group_masks,
    "float16": group_float16,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kssim", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("group", choices=sorted(GROUPS) + ["all"])
    args = parser.parse_args()
    names = sorted(GROUPS) if args.group == "all" else [args.group]
    failed = 0
    for name in names:
        with tempfile.TemporaryDirectory(prefix="kssim_cli_%s_" % name) as workdir:
            ctx = Context(os.path.abspath(args.kssim), os.path.abspath(args.source_dir), workdir)
            GROUPS[name](ctx)
            print("%s: %d checks, %d failed" % (name, ctx.checks, len(ctx.failures)))
            failed += len(ctx.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
