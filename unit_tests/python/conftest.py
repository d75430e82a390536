# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Shared fixtures: the devices to test on (CPU always; CUDA when both PyTorch and kssim have it, or as
KSSIM_TEST_DEVICES=cpu,cuda says) and comparison helpers."""

import os

import pytest
import torch

import kssim
from kssim import _library


def _devices():
    wanted = os.environ.get("KSSIM_TEST_DEVICES")
    if wanted:
        return wanted.split(",")
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() and _library.HAS_CUDA else [])


def pytest_report_header(config):
    return f"kssim {kssim.__version__}: {kssim.build_info()}; torch {torch.__version__}; devices {_devices()}"


@pytest.fixture(params=_devices())
def device(request):
    return torch.device(request.param)


# (value, gradient relative L2) tolerances against reference_ssim.py. Float: the project's 1e-6 and 1e-5.
# Double: about 100x the worst errors that measure_errors.py printed on OpenMP (5.6e-16 and 3.1e-15).
TOLERANCE = {torch.float32: (1e-6, 1e-5), torch.float64: (6e-14, 4e-13)}


def relative_l2(actual, expected):
    """On the CPU in float64: a result and its reference may be on different devices."""
    actual, expected = actual.detach().cpu().double(), expected.detach().cpu().double()
    return float((actual - expected).norm() / expected.norm())


def random_pair(shape, dtype, device, seed, correlation=0.7):
    """Two related random images in [0, 1): SSIM well inside (0, 1), gradients far from zero."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.rand(shape, generator=gen, dtype=torch.float64)
    b = correlation * a + (1 - correlation) * torch.rand(shape, generator=gen, dtype=torch.float64)
    return a.to(device=device, dtype=dtype), b.to(device=device, dtype=dtype)


# The options of direct operator calls, by name: kssim.ssim's defaults, padding code 0 (valid), the exact
# window, and each metric's own (l1_weight, normalized, MS-SSIM's weights).
OPERAND_DEFAULTS = {"window_size": 11, "sigma": 1.5, "k1": 0.01, "k2": 0.03, "data_range": 1.0, "padding": 0,
                    "float32_window": 0, "l1_weight": 0.8, "normalized": 0,
                    "weights": [0.0448, 0.2856, 0.3001, 0.2363, 0.1333]}


def operand(metric, **options):
    """The options operand of torch.ops.kssim's `metric` operators ("ssim", "l1_ssim_loss", "ms_ssim",
    "masked_ssim"), built as the package builds it: by the names the operators give (_option_names)."""
    from kssim import functional
    values = {**OPERAND_DEFAULTS, **options}
    values["weights"] = list(values["weights"])
    return functional._operand(metric, values)
