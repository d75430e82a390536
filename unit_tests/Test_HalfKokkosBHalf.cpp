// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 16-bit tests (HalfTests.hpp) on Kokkos' bhalf_t, on every backend. Kokkos' two 16-bit types are in
// two units (Test_HalfKokkosHalf.cpp, Test_HalfKokkosBHalf.cpp): in one, theirs was the longest compile of
// each GPU build (481 CPU-s, 338 s of wall time on the H200 machine, 2026-12-04e), which the build waited for.
#include "HalfTests.hpp"

#if !KOKKOS_BHALF_T_IS_FLOAT
INSTANTIATE_TYPED_TEST_SUITE_P(KokkosBHalf, Half, EveryBackend<KokkosBHalfConfigsFor>, HalfNames);
#else
// This Kokkos has no 16-bit bhalf_t (it is float): nothing to instantiate (GoogleTest takes no empty list).
static_assert(std::is_same_v<EveryBackend<KokkosBHalfConfigsFor>, ::testing::Types<>>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Half);
#endif
