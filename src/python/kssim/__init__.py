# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kssim for PyTorch: fused, differentiable SSIM on CPU and CUDA tensors, computed by kssim's Kokkos kernels.

    from kssim import fused_ssim          # drop-in for `from fused_ssim import fused_ssim`
    loss = 0.8 * l1 + 0.2 * (1 - fused_ssim(render, target))
    loss = kssim.l1_ssim_loss(render, target)   # the same loss, L1 fused into the SSIM kernels

    import kssim
    kssim.ssim(img1, img2, window_size=11, sigma=1.5, k1=0.01, k2=0.03, data_range=1.0,
               padding="valid", reduction="mean")      # 4-D or 5-D, float32 or float64 (also 16-bit)
    kssim.ms_ssim(img1, img2, weights=None, reduction="mean")        # MS-SSIM, 4-D or 5-D
    kssim.masked_ssim(img1, img2, mask, mode="weights")              # or mode="normalized"
    kssim.ssimulacra2(reference, distorted)          # sRGB in [0, 1], (3, H, W) or (N, 3, H, W); no gradient
    kssim.SSIM(), kssim.MS_SSIM(), kssim.MaskedSSIM(), kssim.L1SSIMLoss()   # torch.nn.Modules of the same
    from kssim.pytorch_msssim import ssim, ms_ssim, SSIM, MS_SSIM     # pytorch-msssim's signatures

Gradients flow to both images (whichever requires them) of every metric but SSIMULACRA2; the operators are
torch.library custom ops, so they run under torch.compile(fullgraph=True) without graph breaks.
"""

from . import _library  # loads the operator library: first, the rest registers on its operators
from . import _registrations  # noqa: F401  (fake kernels of torch.ops.kssim)
from ._library import build_info, clear_cache
from ._version import __version__  # written by CMake from the project's version
from .functional import fused_ssim, fused_ssim3d, l1_ssim_loss, masked_ssim, ms_ssim, ssim, ssimulacra2
from .modules import MS_SSIM, SSIM, L1SSIMLoss, MaskedSSIM
from . import pytorch_msssim  # noqa: F401  (kssim.pytorch_msssim: pytorch-msssim's front door)

__all__ = ["ssim", "ms_ssim", "masked_ssim", "ssimulacra2", "fused_ssim", "fused_ssim3d", "l1_ssim_loss", "SSIM",
           "MS_SSIM", "MaskedSSIM", "L1SSIMLoss", "pytorch_msssim", "build_info", "clear_cache", "__version__"]
