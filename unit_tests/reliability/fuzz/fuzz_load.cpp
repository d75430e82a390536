// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: format detection and loading as `kssim compare` does it (.npy and every image format, by
// content; the seeds are .npy, PNG and PGM/PPM files: fuzz_formats.cpp starts from the other formats).
#include "FuzzCommon.hpp"
#include "io/Error.hpp"
#include "io/Load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  try {
    const LoadedArray l = load_array(kssim_fuzz::bytes(data, size));
    KSSIM_FUZZ_CHECK(element_count(l.array.shape) == l.array.size());
    if (l.is_image()) {
      KSSIM_FUZZ_CHECK(l.array.rank() == 4 && l.array.shape[0] == 1);
      KSSIM_FUZZ_CHECK(l.array.dtype() == DType::Float32);
      if (l.normalized)  // integer samples divided by their maximum; float images keep their values
        for (float v : std::get<std::vector<float>>(l.array.values)) KSSIM_FUZZ_CHECK(v >= 0.0f && v <= 1.0f);
    }
  } catch (const Error&) {
  }
  return 0;
}
