// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the readers of JPEG (libjpeg-turbo), TIFF (libtiff), WebP (libwebp), OpenEXR and PFM,
// reached through format detection as `kssim compare` does. Any input either loads or throws
// kssim::io::Error; when it loads, probe_array (the header-only reading) succeeds and announces exactly
// the format, dtype, shape and alpha that load_array returned, and integer images lie in [0, 1].
// src/io is compiled with a small KSSIM_IO_MAX_SAMPLES (CMakeLists.txt) so that a tiny file announcing a
// huge image stays within the fuzzer's memory limit.
#include "FuzzCommon.hpp"
#include "io/Error.hpp"
#include "io/Load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  const auto bytes = kssim_fuzz::bytes(data, size);
  LoadedArray l;
  try {
    l = load_array(bytes);
  } catch (const Error&) {
    try {
      (void)probe_array(bytes);  // may accept a header whose data is bad, but must not crash
    } catch (const Error&) {
    }
    return 0;
  }
  const ArrayInfo info = probe_array(bytes);  // must not throw for a file that loads
  KSSIM_FUZZ_CHECK(info.format == l.format && info.dtype == l.array.dtype() && info.shape == l.array.shape);
  KSSIM_FUZZ_CHECK(info.alpha == l.alpha);
  KSSIM_FUZZ_CHECK(element_count(l.array.shape) == l.array.size());
  if (l.is_image()) {
    KSSIM_FUZZ_CHECK(l.array.rank() == 4 && l.array.shape[0] == 1 && l.array.dtype() == DType::Float32);
    KSSIM_FUZZ_CHECK(l.array.shape[1] == 1 || l.array.shape[1] == 3);
    if (l.normalized)
      for (float v : std::get<std::vector<float>>(l.array.values)) KSSIM_FUZZ_CHECK(v >= 0.0f && v <= 1.0f);
  }
  return 0;
}
