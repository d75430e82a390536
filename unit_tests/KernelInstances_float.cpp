// See KernelInstances.hpp.
#include "KernelInstances.hpp"

KSSIM_TEST_EVERY_BACKEND(KSSIM_INSTANTIATE, float)
