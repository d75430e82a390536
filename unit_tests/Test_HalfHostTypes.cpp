// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 16-bit tests (HalfTests.hpp) on the host compiler's _Float16 and __bf16, on the host backends
// (PairFor leaves them out of the GPU ones).
#include "HalfTests.hpp"

#if (KSSIM_HAS_HOST_FLOAT16 || KSSIM_HAS_HOST_BFLOAT16) && (KSSIM_TEST_WITH_SERIAL || KSSIM_TEST_WITH_OPENMP)
INSTANTIATE_TYPED_TEST_SUITE_P(Host, Half, EveryBackend<HostHalfConfigsFor>, HalfNames);
#else
// A host compiler without 16-bit types, or a GPU-only test build: nothing to instantiate (GoogleTest
// takes no empty list).
static_assert(std::is_same_v<EveryBackend<HostHalfConfigsFor>, ::testing::Types<>>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Half);
#endif
