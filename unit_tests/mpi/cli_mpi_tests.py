#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""`mpirun -np P kssim compare A.npy B.npy --decompose ...` against the single-process tool: values within
1e-6 (float32) / 1e-12 (float64), gradients within 1e-5 / 1e-11 relative L2, maps within 2e-5 / 1e-12;
the error contract (exit status 2 on every rank, one `kssim: error:` line, nothing on stdout, no file left).

usage: cli_mpi_tests.py KSSIM MPIRUN [MPIRUN_ARGS...]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

kssim, mpirun = sys.argv[1], sys.argv[2:]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(args, ranks=None, tool=None):
    cmd = ([*mpirun, "-np", str(ranks)] if ranks else []) + [tool or kssim, "compare", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def compare(d, a, b, dims, extra, ranks, grid, dtype):
    outs = {k: os.path.join(d, f"{k}1.npy") for k in ("map", "ga", "gb")}
    outp = {k: os.path.join(d, f"{k}{ranks}.npy") for k in ("map", "ga", "gb")}
    base = [a, b, "--dims", str(dims), "--json", *extra]
    one = run(base + ["--map", outs["map"], "--grad-a", outs["ga"], "--grad-b", outs["gb"]])
    many = run(base + ["--decompose", grid, "--map", outp["map"], "--grad-a", outp["ga"], "--grad-b", outp["gb"]], ranks)
    what = f"np {ranks} --decompose {grid} {' '.join(extra)} {dtype}"
    if one.returncode or many.returncode:
        check(False, f"{what}: exit {one.returncode} / {many.returncode}: {one.stderr} {many.stderr}")
        return
    j1, jp = json.loads(one.stdout), json.loads(many.stdout)
    tight = dtype == "float64"
    check(abs(j1["ssim"] - jp["ssim"]) <= (1e-12 if tight else 1e-6) and j1["map_shape"] == jp["map_shape"],
          f"{what}: SSIM {jp['ssim']} vs {j1['ssim']} (one process)")
    for k, bar in (("map", 1e-12 if tight else 2e-5), ("ga", 1e-11 if tight else 1e-5), ("gb", 1e-11 if tight else 1e-5)):
        x, y = np.load(outs[k]), np.load(outp[k])
        if k == "map":
            err = float(np.abs(x - y).max()) if x.shape == y.shape else float("inf")
        else:
            err = float(np.linalg.norm(x - y) / np.linalg.norm(x)) if x.shape == y.shape else float("inf")
        check(err <= bar and x.dtype == y.dtype, f"{what}: {k} error {err:.2e} (bar {bar:.0e}), shape {y.shape}")


def expect_error(d, args, ranks, what, outputs=(), tool=None, says=""):
    """`says`: text the error line must contain."""
    r = run(args, ranks, tool)
    lines = [l for l in r.stderr.splitlines() if l.startswith("kssim: error:")]
    left = [o for o in outputs if os.path.exists(o) or os.path.exists(o + ".kssim-partial")]
    check(r.returncode == 2 and len(lines) == 1 and r.stdout == "" and not left and all(says in l for l in lines),
          f"np {ranks} {what}: exit {r.returncode}, {len(lines)} error line(s) {lines}, files left {left}")


with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(7)
    for dtype in ("float32", "float64"):
        a = rng.random((2, 13, 17, 19)).astype(dtype)  # (C, D, H, W)
        b = np.clip(a + 0.05 * rng.standard_normal(a.shape), 0, 1).astype(dtype)
        pa, pb = os.path.join(d, f"a_{dtype}.npy"), os.path.join(d, f"b_{dtype}.npy")
        np.save(pa, a)
        np.save(pb, b)
        grids = ((1, "1x1x1"), (2, "1x1x2"), (4, "2x2x1"), (4, "1x4x1")) if dtype == "float32" else ((4, "2x1x2"),)
        for ranks, grid in grids:
            for padding in ("valid", "same"):
                compare(d, pa, pb, 3, ["--padding", padding, "--window", "7"], ranks, grid, dtype)
    img_a = rng.random((21, 25)).astype("float32")  # (H, W)
    img_b = np.clip(img_a + 0.05 * rng.standard_normal(img_a.shape), 0, 1).astype("float32")
    ia, ib = os.path.join(d, "ia.npy"), os.path.join(d, "ib.npy")
    np.save(ia, img_a)
    np.save(ib, img_b)
    compare(d, ia, ib, 2, ["--padding", "same"], 4, "2x2", "float32")
    compare(d, ia, ib, 2, [], 2, "2x1", "float32")

    pa, pb = os.path.join(d, "a_float32.npy"), os.path.join(d, "b_float32.npy")
    out = os.path.join(d, "err_grad.npy")
    expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x3", "--grad-a", out], 2,
                 "a grid of 3 blocks on 2 ranks", [out])
    expect_error(d, [pa, os.path.join(d, "missing.npy"), "--dims", "3", "--decompose", "1x2x2", "--grad-a", out], 4,
                 "a missing input", [out])
    expect_error(d, [pa, ib, "--dims", "3", "--decompose", "1x1x2", "--grad-a", out], 2, "B of another shape", [out])
    expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x2", "--per-image"], 2, "an unsupported flag")
    for padding in ("reflect", "replicate"):  # kssim::mpi takes valid and same padding only
        expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x2", "--padding", padding, "--map", out], 2,
                     f"--padding {padding}", [out], says=f"--padding {padding} is not supported with --decompose")
    expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x2", "--padding", "mirror"], 2, "an unknown --padding",
                 says="expected valid, same, reflect or replicate")
    ha, hb = os.path.join(d, "ha.npy"), os.path.join(d, "hb.npy")  # float16: read as stored, so refused
    np.save(ha, img_a.astype("float16"))
    np.save(hb, img_b.astype("float16"))
    expect_error(d, [ha, hb, "--dims", "2", "--decompose", "1x2", "--grad-a", out], 2, "float16 arrays", [out])
    expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x2", "--window", "8", "--map", out], 2,
                 "an even window", [out])
    expect_error(d, [ia, ib, "--dims", "2", "--decompose", "1x2", "--window", "31", "--grad-b", out], 2,
                 "an image smaller than the window", [out])
    expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x2", "--grad-a", os.path.join(d, "no", "dir.npy")], 2,
                 "an output in a missing directory")

    # kssim hands --decompose to kssim-mpi, the executable beside it, and does not link MPI itself (loading
    # Open MPI costs about 0.5 s at each of its two starts); a kssim without kssim-mpi beside it refuses.
    def needed(path):
        dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
        return [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    beside = os.path.join(os.path.dirname(kssim), "kssim-mpi")
    check(not any("libmpi" in lib for lib in needed(kssim)), f"kssim links no MPI library: {needed(kssim)}")
    check(any("libmpi" in lib for lib in needed(beside)), "kssim-mpi links MPI")
    alone = os.path.join(d, "alone", "kssim")
    os.makedirs(os.path.dirname(alone))
    shutil.copy(kssim, alone)
    # One process: the refusal comes before MPI starts, and under mpirun the launcher's own exit status once read
    # 255 instead of the ranks' 2 (a loaded CI machine), while every rank had exited 2 with its message.
    expect_error(d, [pa, pb, "--dims", "3", "--decompose", "1x1x2", "--grad-a", out], None,
                 "kssim without kssim-mpi beside it", [out], tool=alone)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
