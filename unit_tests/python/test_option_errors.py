# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The options' rules are kssim's (kssim::validate, the C++ objects' constructors): every metric and module
raises them as ValueError with kssim's own message, unchanged, on the forward and the backward path, also when
a workspace of the same problem with good options is already cached (a NaN option must not find it)."""

import math
import re

import pytest
import torch

import kssim
from conftest import operand, random_pair

# kssim::validate's messages (include/kssim/Options.hpp), whole.
BAD_OPTIONS = [
    ({"sigma": math.nan}, "kssim: sigma must be a finite number > 0, got nan"),
    ({"data_range": math.inf}, "kssim: data_range must be a finite number > 0, got inf"),
    ({"window_size": 4}, "kssim: window_size must be odd and in [3, 31], got 4"),
    ({"k1": 0.0, "k2": 0.0}, "kssim: k1 and k2 cannot both be 0 (the map would divide by zero)"),
]
BAD_IDS = ["sigma_nan", "data_range_inf", "window_size_4", "k1_k2_zero"]

MS = {"window_size": 3, "weights": (0.3, 0.7)}  # MS-SSIM on 16 x 16 images: 2 scales of a 3-tap window

# Each metric and module as call(img1, img2, mask, **options).
METRICS = {
    "ssim": lambda a, b, m, **o: kssim.ssim(a, b, **o),
    "SSIM": lambda a, b, m, **o: kssim.SSIM(**o)(a, b),
    "ssim_per_image": lambda a, b, m, **o: kssim.ssim(a, b, reduction="none", **o),
    "ssim_float32_window": lambda a, b, m, **o: kssim.ssim(a, b, window="float32", padding="same", **o),
    "l1_ssim_loss": lambda a, b, m, **o: kssim.l1_ssim_loss(a, b, **o),
    "L1SSIMLoss": lambda a, b, m, **o: kssim.L1SSIMLoss(**o)(a, b),
    "ms_ssim": lambda a, b, m, **o: kssim.ms_ssim(a, b, **{**MS, **o}),
    "MS_SSIM": lambda a, b, m, **o: kssim.MS_SSIM(**{**MS, **o})(a, b),
    "masked_ssim": lambda a, b, m, **o: kssim.masked_ssim(a, b, m, **o),
    "masked_ssim_normalized_per_image": lambda a, b, m, **o: kssim.masked_ssim(a, b, m, mode="normalized",
                                                                               reduction="none", **o),
    "MaskedSSIM": lambda a, b, m, **o: kssim.MaskedSSIM(**o)(a, b, m),
}


def _exactly(message):
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize("requires_grad", [False, True], ids=["value", "with_gradients"])
@pytest.mark.parametrize("metric", list(METRICS))
@pytest.mark.parametrize("options,message", BAD_OPTIONS, ids=BAD_IDS)
def test_every_metric_raises_kssims_message(device, metric, options, message, requires_grad):
    img1, img2 = random_pair((2, 2, 16, 16), torch.float32, device, seed=1)
    mask = torch.ones((2, 1, 16, 16), device=device)
    img1.requires_grad_(requires_grad)
    call = METRICS[metric]
    call(img1, img2, mask)  # the same problem with good options: its workspace is cached now
    with pytest.raises(ValueError, match=_exactly(message)):
        call(img1, img2, mask, **options)


@pytest.mark.parametrize("options,message", BAD_OPTIONS, ids=BAD_IDS)
def test_the_backward_operators_raise_kssims_message(device, options, message):
    """Direct calls of the backward operators (autograd calls them with the forward's options, which the
    forward checked): the same check, before any cached workspace is looked up."""
    img1, img2 = random_pair((1, 2, 16, 16), torch.float64, device, seed=2)
    mask = torch.ones((1, 1, 16, 16), dtype=torch.float64, device=device)
    grad = torch.ones((), dtype=torch.float64, device=device)
    o = {"window_size": 3, **options}
    ops = torch.ops.kssim
    calls = [
        lambda: ops.ssim_backward(grad, img1, img2, operand("ssim", **o), 3, False),
        lambda: ops.l1_ssim_loss_backward(grad, img1, img2, operand("l1_ssim_loss", padding=1, **o), 3, False),
        lambda: ops.ms_ssim_backward(grad, img1, img2, operand("ms_ssim", weights=[0.3, 0.7], **o), 3, False),
        lambda: ops.masked_ssim_backward(grad, img1, img2, mask, operand("masked_ssim", **o), 3, False),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=_exactly(message)):
            call()


def test_the_fused_ssim_drop_ins_raise_kssims_size_rule(device):
    """fused_ssim / fused_ssim3d have fused-ssim's fixed options (11, 1.5, 0.01, 0.03, 1); what they can get
    wrong is an image smaller than the window with padding="valid": kssim's message."""
    img1, img2 = random_pair((1, 2, 8, 16), torch.float32, device, seed=3)
    with pytest.raises(ValueError, match=_exactly("kssim: with valid padding every spatial extent must be >= "
                                                  "window_size 11, got image extents (1, 2, 8, 16)")):
        kssim.fused_ssim(img1, img2, padding="valid")
    vol1, vol2 = random_pair((1, 1, 8, 16, 16), torch.float32, device, seed=4)
    with pytest.raises(ValueError, match=_exactly("kssim: with valid padding every spatial extent must be >= "
                                                  "window_size 11, got image extents (1, 1, 8, 16, 16)")):
        kssim.fused_ssim3d(vol1, vol2, padding="valid")


@pytest.mark.parametrize("options,message", [
    ({"win_sigma": math.nan}, BAD_OPTIONS[0][1]),
    ({"data_range": math.inf}, BAD_OPTIONS[1][1]),
    ({"K": (0.0, 0.0)}, BAD_OPTIONS[3][1]),
], ids=["sigma_nan", "data_range_inf", "k1_k2_zero"])
def test_pytorch_msssim_raises_kssims_message(device, options, message):
    """kssim.pytorch_msssim passes its options on (its win_size must be odd: pytorch-msssim's own message)."""
    from kssim import pytorch_msssim
    x, y = random_pair((1, 3, 16, 16), torch.float32, device, seed=5)
    with pytest.raises(ValueError, match=_exactly(message)):
        pytorch_msssim.ssim(x, y, **options)
    with pytest.raises(ValueError, match=_exactly(message)):
        pytorch_msssim.SSIM(**options)(x, y)
    with pytest.raises(ValueError, match="^Window size should be odd.$"):
        pytorch_msssim.ssim(x, y, win_size=4)


@pytest.mark.parametrize("options,error,message", [
    ({"window_size": 11.0}, ValueError, "window_size must be an int"),
    ({"window_size": True}, ValueError, "window_size must be an int"),
    ({"sigma": "1.5"}, TypeError, "sigma must be a real number"),
    ({"k1": None}, TypeError, "k1 must be a real number"),
    ({"data_range": 1j}, TypeError, "data_range must be a real number"),
    ({"k2": torch.ones(2)}, TypeError, "k2 must be a real number"),
], ids=["float_window_size", "bool_window_size", "str_sigma", "none_k1", "complex_data_range", "tensor_k2"])
def test_what_cannot_cross_into_the_operator_is_pythons_error(options, error, message):
    img1, img2 = random_pair((1, 1, 16, 16), torch.float32, "cpu", seed=6)
    with pytest.raises(error, match=message):
        kssim.ssim(img1, img2, **options)


def test_real_numbers_of_other_types_are_taken(device):
    img1, img2 = random_pair((1, 1, 16, 16), torch.float64, device, seed=7)
    expected = kssim.ssim(img1, img2, sigma=1.5, data_range=2.0)
    assert torch.equal(kssim.ssim(img1, img2, sigma=torch.tensor(1.5), data_range=2), expected)


# The operators' options operand (TorchOps.cpp's layout): each metric's forward and backward operator as
# call(options, per_image), on 16 x 16 images.
def _operator_calls(device):
    img1, img2 = random_pair((2, 1, 16, 16), torch.float64, device, seed=8)
    mask = torch.ones_like(img1)
    grad = torch.ones((), dtype=torch.float64, device=device)
    ops = torch.ops.kssim
    return {
        "ssim": [lambda o, p: ops.ssim(img1, img2, o, 3, p), lambda o, p: ops.ssim_backward(grad, img1, img2, o, 3, p)],
        "l1_ssim_loss": [lambda o, p: ops.l1_ssim_loss(img1, img2, o, 3, p),
                         lambda o, p: ops.l1_ssim_loss_backward(grad, img1, img2, o, 3, p)],
        "ms_ssim": [lambda o, p: ops.ms_ssim(img1, img2, o, 3, p),
                    lambda o, p: ops.ms_ssim_backward(grad, img1, img2, o, 3, p)],
        "masked_ssim": [lambda o, p: ops.masked_ssim(img1, img2, mask, o, 3, p),
                        lambda o, p: ops.masked_ssim_backward(grad, img1, img2, mask, o, 3, p)],
    }


def _good(metric):
    return operand(metric, window_size=3, weights=[0.5, 0.5])


def _with(metric, name, value):
    """The good operand of `metric` with the field `name` set to `value` (found by the operators' own names)."""
    options = _good(metric)
    options[list(torch.ops.kssim._option_names(metric)).index(name)] = value
    return options


LAYOUT_WORDS = "window_size, sigma, k1, k2, data_range, padding, float32_window"
MALFORMED = [
    ("ssim", lambda: _good("ssim")[:5], f"kssim: the options of ssim are 7 numbers ({LAYOUT_WORDS}), got 5 numbers"),
    ("ssim", lambda: _good("ssim") + [1.0],
     f"kssim: the options of ssim are 7 numbers ({LAYOUT_WORDS}), got 8 numbers"),
    ("l1_ssim_loss", lambda: _good("l1_ssim_loss")[:7],
     f"kssim: the options of l1_ssim_loss are 8 numbers ({LAYOUT_WORDS}, l1_weight), got 7 numbers"),
    ("masked_ssim", lambda: [],
     f"kssim: the options of masked_ssim are 8 numbers ({LAYOUT_WORDS}, normalized), got 0 numbers"),
    ("ms_ssim", lambda: _good("ms_ssim")[:6],
     f"kssim: the options of ms_ssim are {LAYOUT_WORDS}, then the weights (7 numbers and one per weight), got 6 "
     "numbers"),
    ("ms_ssim", lambda: _good("ms_ssim")[:7], "kssim: ms_ssim: needs 1 to 8 weights (one per scale), got 0"),
    ("ssim", lambda: _with("ssim", "window_size", 3.5), "kssim: window_size must be an integer, got 3.5"),
    ("l1_ssim_loss", lambda: _with("l1_ssim_loss", "window_size", math.nan),
     "kssim: window_size must be an integer, got nan"),
    ("ms_ssim", lambda: _with("ms_ssim", "window_size", -math.inf), "kssim: window_size must be an integer, got -inf"),
    ("masked_ssim", lambda: _with("masked_ssim", "window_size", 1e10), "kssim: window_size 1e+10 does not fit an int"),
    ("ssim", lambda: _with("ssim", "padding", 0.5), "kssim: padding must be kssim::Padding's integer code, got 0.5"),
    ("masked_ssim", lambda: _with("masked_ssim", "padding", math.nan),
     "kssim: padding must be kssim::Padding's integer code, got nan"),
    ("ssim", lambda: _with("ssim", "float32_window", 2), "kssim: float32_window must be 0 or 1, got 2"),
    ("l1_ssim_loss", lambda: _with("l1_ssim_loss", "float32_window", 0.5),
     "kssim: float32_window must be 0 or 1, got 0.5"),
    ("masked_ssim", lambda: _with("masked_ssim", "normalized", -1), "kssim: normalized must be 0 or 1, got -1"),
]


@pytest.mark.parametrize("metric,options,message", MALFORMED)
def test_a_malformed_options_operand_is_a_value_error(device, metric, options, message):
    """Direct calls of the operators with an options list of the wrong length, or a window size, padding code or
    flag that is not a whole number of its kind: ValueError naming it, forward and backward, never a crash."""
    for call in _operator_calls(device)[metric]:
        with pytest.raises(ValueError, match=_exactly(message)):
            call(options(), False)


@pytest.mark.parametrize("metric", ["l1_ssim_loss", "masked_ssim"])
def test_operators_without_per_image_results_refuse_per_image(device, metric):
    for call in _operator_calls(device)[metric]:
        with pytest.raises(ValueError, match=_exactly(f"kssim: {metric} has no per-image result (per_image must be "
                                                      "False)")):
            call(_good(metric), True)


@pytest.mark.parametrize("metric", ["l1_ssim_loss", "masked_ssim"])
def test_fake_kernels_refuse_per_image_as_the_operators_do(device, metric):
    """torch.compile traces with the fake kernels: they refuse what the operators refuse, with the same error."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    message = _exactly(f"kssim: {metric} has no per-image result (per_image must be False)")
    with FakeTensorMode(allow_non_fake_inputs=False) as mode:
        img1 = mode.from_tensor(torch.rand((2, 1, 16, 16), dtype=torch.float64, device=device))
        img2, mask = torch.rand_like(img1), torch.ones_like(img1)
        grad = torch.ones((), dtype=torch.float64, device=device)
        ops = torch.ops.kssim
        forward = {"l1_ssim_loss": lambda p: ops.l1_ssim_loss(img1, img2, _good(metric), 3, p),
                   "masked_ssim": lambda p: ops.masked_ssim(img1, img2, mask, _good(metric), 3, p)}[metric]
        backward = {"l1_ssim_loss": lambda p: ops.l1_ssim_loss_backward(grad, img1, img2, _good(metric), 3, p),
                    "masked_ssim": lambda p: ops.masked_ssim_backward(grad, img1, img2, mask, _good(metric), 3,
                                                                      p)}[metric]
        assert forward(False).shape == ()
        for call in (forward, backward):
            with pytest.raises(ValueError, match=message):
                call(True)


@pytest.mark.parametrize("metric,name,value,message", [
    ("ms_ssim", "padding", 1, "kssim: ms_ssim: padding must be Padding::Valid (every scale uses valid windows)"),
    ("masked_ssim", "float32_window", 1, "kssim: masked SSIM takes Window::Exact only (a mask's weights renormalise "
                                         "the window; Window::Float32 defines SSIM by the raw window's moments)"),
])
def test_every_metric_carries_the_ssim_options_and_kssim_decides(device, metric, name, value, message):
    """MS-SSIM's and masked SSIM's operands have every SSIM option: what their C++ objects refuse is kssim's
    ValueError, forward and backward."""
    for call in _operator_calls(device)[metric]:
        with pytest.raises(ValueError, match=_exactly(message)):
            call(_with(metric, name, value), False)


def test_option_names_are_the_operators():
    ssim = torch.ops.kssim._option_names("ssim")
    assert ssim == ["window_size", "sigma", "k1", "k2", "data_range", "padding", "float32_window"]
    assert torch.ops.kssim._option_names("l1_ssim_loss") == ssim + ["l1_weight"]
    assert torch.ops.kssim._option_names("ms_ssim") == ssim + ["weights"]
    assert torch.ops.kssim._option_names("masked_ssim") == ssim + ["normalized"]
    with pytest.raises(ValueError, match=r"^kssim: no metric 'psnr'"):
        torch.ops.kssim._option_names("psnr")
