// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The arguments of the plans' passes besides the images (ssim/Plan.hpp, ssim/Slabs.hpp, msssim/MsSsimPlan.hpp,
// masked/MaskedPlan.hpp and the training objects): named fields instead of a dozen positional ones, so that a
// call reads as what it asks for:
//   plan.backward(exec, x, y, {.grad1 = g1, .scale = -0.2, .accumulate = true}, {.l1_scale = 0.8});

#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/UpstreamFactor.hpp>

namespace kssim::impl {

// What a backward pass writes: d(scale * upstream * value)/dx into grad1 and /dy into grad2 (either may be
// empty), added to what they hold when `accumulate`. `scale` is a host factor, `upstream` an optional device
// one (UpstreamFactor.hpp).
template <class O>
struct GradientTargets {
  OutputArray<O> grad1, grad2;
  double scale = 1.0;
  UpstreamFactor upstream{};
  bool accumulate = false;
};

// The optional terms of an SSIM plan's forward pass: the weight of the fused loss's L1 term in loss() (plans
// WithL1::Yes); the recentring shifts to use (device, (images, 2)), as the slabs of a larger problem take their
// slices' (Slabs.hpp), null for this problem's own (Recentring.hpp); where the value (the mean, or the
// fused loss), rounded to float, goes too (written by the kernel that computes it).
// Plans made MapWeighting::Centre (Plan.hpp) take the map weights: the mask, (N, C, D, H, W) of the images'
// extents and storage type S with its channels possibly broadcast (stride 0).
template <class T, class S = T>
struct ForwardTerms {
  double l1_weight = 0;
  const T* shifts = nullptr;
  float* value_float = nullptr;
  InputArray<S> map_weights{};
};

// The optional terms of an SSIM plan's backward pass: device factors per (n, c) slice (MS-SSIM's chain rule
// through its product); the scale of the fused loss's L1 term, d(l1_scale * upstream * mean|x - y|)/dx and /dy
// (it needs no partials); the map pixels the mean is over (0: this problem's; a slab's is its whole problem's).
struct BackwardTerms {
  const double* slice_factors = nullptr;
  double l1_scale = 0;
  double map_count = 0;
};

}  // namespace kssim::impl
