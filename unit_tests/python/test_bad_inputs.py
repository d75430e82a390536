# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Bad input raises a Python exception whose message names the problem; nothing is computed."""

import pytest
import torch

import kssim
from conftest import operand
from kssim import _library

GOOD = (1, 3, 16, 16)


def _img(shape=GOOD, dtype=torch.float32, device="cpu"):
    return torch.rand(shape, dtype=torch.float64).to(dtype=dtype, device=device)


@pytest.mark.parametrize("img1,img2,error,message", [
    (_img(), _img().to("meta"), ValueError, "same device"),
    (_img(), _img((1, 3, 16, 17)), ValueError, "same shape"),
    (_img(), _img(dtype=torch.float64), TypeError, "same dtype"),
    (_img(dtype=torch.int32), _img(dtype=torch.int32), TypeError, "float32, float64, float16 or bfloat16"),
    (_img(dtype=torch.uint8), _img(dtype=torch.uint8), TypeError, "float32, float64, float16 or bfloat16"),
    (_img(dtype=torch.complex64), _img(dtype=torch.complex64), TypeError, "float32, float64, float16 or bfloat16"),
    (_img(dtype=torch.float16), _img(dtype=torch.bfloat16), TypeError, "same dtype"),
    (_img((3, 16, 16)), _img((3, 16, 16)), ValueError, "4-D"),
    (_img((1, 1, 1, 3, 16, 16)), _img((1, 1, 1, 3, 16, 16)), ValueError, "4-D"),
    (_img((1, 3, 10, 16)), _img((1, 3, 10, 16)), ValueError, "window_size 11"),
    (_img((1, 3, 0, 16)), _img((1, 3, 0, 16)), ValueError, "empty"),
    (_img().numpy(), _img(), TypeError, "torch.Tensor"),
], ids=["devices", "shapes", "dtypes", "int32", "uint8", "complex", "float16_bfloat16", "rank3", "rank6", "too_small",
        "empty", "numpy"])
def test_bad_images(img1, img2, error, message):
    with pytest.raises(error, match=message):
        kssim.ssim(img1, img2)


@pytest.mark.parametrize("options,message", [
    ({"window_size": 10}, "odd"), ({"window_size": 33}, r"window_size must be odd and in \[3, 31\], got 33"),
    ({"window_size": 1}, r"window_size must be odd and in \[3, 31\], got 1"),
    ({"sigma": 0.0}, "sigma"), ({"data_range": -1.0}, "data_range"), ({"k1": 0.0, "k2": 0.0}, "k1 and k2"),
    ({"padding": "mirror"}, "padding"), ({"reduction": "sum"}, "reduction"), ({"window": "float64"}, "window must be"),
])
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        kssim.ssim(_img(), _img(), **options)


def test_fused_ssim_takes_4d_only():
    with pytest.raises(ValueError, match="4-D"):
        kssim.fused_ssim(_img((1, 1, 12, 12, 12)), _img((1, 1, 12, 12, 12)))
    with pytest.raises(ValueError, match="5-D"):
        kssim.fused_ssim3d(_img(), _img())


def test_the_operators_check_their_arguments_too():
    """Direct calls of torch.ops.kssim (bypassing the Python checks) raise, never crash."""
    ops, options = torch.ops.kssim, operand("ssim")
    with pytest.raises(TypeError, match="float32, float64, float16 or bfloat16"):
        ops.ssim(_img(dtype=torch.int64), _img(dtype=torch.int64), options, 0, False)
    with pytest.raises(ValueError, match="window_size"):
        ops.ssim(_img(), _img(), operand("ssim", window_size=4), 0, False)
    with pytest.raises(ValueError, match="window_size 11"):
        ops.ssim(_img((1, 1, 8, 30)), _img((1, 1, 8, 30)), options, 0, False)
    with pytest.raises(ValueError, match="same shape"):
        ops.ssim(_img(), _img((1, 3, 16, 17)), options, 0, False)
    with pytest.raises(ValueError, match="grad"):
        ops.ssim_backward(torch.ones(5), _img(), _img(), options, 1, True)


@pytest.mark.skipif(_library.HAS_CUDA, reason="this build has CUDA")
def test_cuda_tensors_without_a_cuda_build():
    """Calls the operators' CUDA kernels (registered in every build) through the CUDA dispatch key, since a
    CPU-only PyTorch cannot make CUDA tensors; with a CUDA PyTorch, kssim.ssim says the same."""
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    with pytest.raises(RuntimeError, match="built without CUDA"):
        torch.ops.kssim.ssim.default.redispatch(keys, _img(), _img(), operand("ssim"), 0, False)
    with pytest.raises(RuntimeError, match="built without CUDA"):
        torch.ops.kssim.ssim_backward.default.redispatch(keys, torch.ones(()), _img(), _img(), operand("ssim"), 1,
                                                         False)
    if torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="built without CUDA"):
            kssim.ssim(_img(device="cuda"), _img(device="cuda"))
