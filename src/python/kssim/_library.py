# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Finds and loads the compiled operator library (torch.ops.kssim), and releases Kokkos at exit."""

import atexit
import collections
import os
import pathlib

import torch

_LIBRARY_GLOB = "_kssim_ops*.so"


def _library_path():
    explicit = os.environ.get("KSSIM_TORCH_LIBRARY")
    if explicit:
        return explicit
    here = pathlib.Path(__file__).resolve().parent
    found = sorted(here.glob(_LIBRARY_GLOB))
    if not found:
        raise ImportError(
            f"kssim: no compiled operator library ({_LIBRARY_GLOB}) in {here}. Build it with CMake "
            "(-DKSSIM_ENABLE_TORCH=ON; the build tree's python/ folder is then an importable package) or "
            "install kssim with `pip install --no-build-isolation src/python`; KSSIM_TORCH_LIBRARY may also "
            "name the library file.")
    return str(found[0])


def _check_torch_version():
    from ._version import torch_version
    if torch.__version__ != torch_version:
        raise ImportError(
            f"kssim: its operator library was compiled against torch {torch_version}, but this is torch "
            f"{torch.__version__}; PyTorch's C++ ABI changes between versions, so rebuild kssim with this one "
            "(pip install --no-build-isolation --force-reinstall src/python, or a new CMake build)")


_check_torch_version()
torch.ops.load_library(_library_path())
# Kokkos is finalised (if kssim initialised it) while PyTorch and the CUDA runtime are still alive.
atexit.register(torch.ops.kssim._finalize)

# Whether CUDA tensors can be computed on: fixed when the library was built.
HAS_CUDA = torch.ops.kssim._build_info().endswith("; cuda")


def build_info():
    """The Kokkos version and backends kssim was built with, e.g. 'Kokkos 5.2.2, host OpenMP; no cuda'."""
    return torch.ops.kssim._build_info()


def clear_cache():
    """Releases every cached workspace (they are allocated again on next use)."""
    torch.ops.kssim._clear_cache()


CacheStats = collections.namedtuple("CacheStats", "held created capacity recomputed")


def cache_stats():
    """Workspaces held, allocated since the start, the most held at once, and backward passes that had to
    run the forward stages again: for tests."""
    return CacheStats(*torch.ops.kssim._cache_stats())

