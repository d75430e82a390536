// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// kssim: fused, differentiable SSIM for Kokkos. Include this one header.

#include <kssim/Options.hpp>
#include <kssim/SSIM.hpp>
#include <kssim/Instantiate.hpp>
#include <kssim/L1SSIMLoss.hpp>
#include <kssim/MaskedSSIM.hpp>
#include <kssim/MSSSIM.hpp>
#include <kssim/Ssimulacra2.hpp>
#include <kssim/ViewChecks.hpp>
