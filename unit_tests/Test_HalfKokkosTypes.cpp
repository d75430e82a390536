// The 16-bit tests (HalfTests.hpp) on Kokkos' half_t and bhalf_t, on every backend.
#include "HalfTests.hpp"

#if !KOKKOS_HALF_T_IS_FLOAT || !KOKKOS_BHALF_T_IS_FLOAT
INSTANTIATE_TYPED_TEST_SUITE_P(Kokkos, Half, EveryBackend<KokkosHalfConfigsFor>, HalfNames);
#else
// This Kokkos has no 16-bit types (half_t is float): nothing to instantiate (GoogleTest takes no empty list).
static_assert(std::is_same_v<EveryBackend<KokkosHalfConfigsFor>, ::testing::Types<>>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Half);
#endif
