// See KernelSpaces.hpp.
#include "KernelSpaces.hpp"

KSSIM_TORCH_EVERY_SPACE(KSSIM_INSTANTIATE, double)
