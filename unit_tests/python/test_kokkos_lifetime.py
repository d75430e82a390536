# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Kokkos' lifetime in a Python process: kssim initialises it at its first call and finalises it at exit,
unless the program initialised it first; then the program finalises it, and kssim's workspaces are
released before that. Each case runs in a fresh interpreter."""

import ctypes.util
import os
import pathlib
import subprocess
import sys

import pytest
import torch  # noqa: F401  (the children import it too; this keeps collection order simple)

import kssim


def _run(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.setdefault("OMP_PROC_BIND", "false")  # the program's own Kokkos::initialize would warn otherwise
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def _shared_kokkos():
    """The libkokkoscore shared library kssim's module uses, or None when Kokkos is linked in statically
    (then no other program component can share kssim's Kokkos)."""
    for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
        if "libkokkoscore" in line and ".so" in line:
            return line.split()[-1]
    return None


def test_kssim_initialises_and_finalises_kokkos():
    result = _run("import torch, kssim\n"
                  "x = torch.rand(1, 1, 16, 16, requires_grad=True)\n"
                  "kssim.ssim(x, x.detach()).backward()\n"
                  "print('ok', flush=True)\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert "Kokkos" not in result.stderr  # e.g. "deallocated after Kokkos::finalize" or a missing finalize


def test_a_program_that_initialised_kokkos_first():
    library = _shared_kokkos()
    if library is None:
        pytest.skip("Kokkos is linked statically into kssim's module")
    code = f"""
import ctypes, torch
kokkos = ctypes.CDLL({library!r}, mode=ctypes.RTLD_GLOBAL)
argc = ctypes.c_int(0)
kokkos._ZN6Kokkos10initializeERiPPc(ctypes.byref(argc), None)  # Kokkos::initialize(int&, char**)
import kssim
x = torch.rand(1, 2, 20, 20, requires_grad=True)
kssim.ssim(x, x.detach()).backward()
assert kssim._library.cache_stats().held >= 1
kokkos._ZN6Kokkos8finalizeEv()  # the program finalises its Kokkos: kssim's workspaces go first
assert kssim._library.cache_stats().held == 0
try:
    kssim.ssim(x, x)
except RuntimeError as e:
    print("after finalize:", e)
"""
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert "after finalize: kssim: Kokkos has already been finalized" in result.stdout
    assert "Kokkos" not in result.stderr
