// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// See KernelInstances.hpp.
#include "KernelInstances.hpp"

KSSIM_TEST_EVERY_BACKEND(KSSIM_INSTANTIATE, float)
