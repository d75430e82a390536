// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the .npy reader. Any input either parses or throws kssim::io::Error; a parsed array
// is consistent (element count matches the shape) and survives encode -> parse unchanged, bit for bit.
#include "FuzzCommon.hpp"
#include "io/Npy.hpp"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  const auto parsed = kssim_fuzz::parse_or_refuse(data, size, [](auto b) { return parse_npy(b); });
  if (!parsed) return 0;
  const Array& a = *parsed;
  KSSIM_FUZZ_CHECK(element_count(a.shape) == a.size());
  KSSIM_FUZZ_CHECK(a.size() * dtype_size(a.dtype()) <= size);  // the data came from the file
  const std::vector<std::byte> encoded = encode_npy(a);
  KSSIM_FUZZ_CHECK(looks_like_npy(encoded));
  const Array b = parse_npy(encoded);  // must not throw
  KSSIM_FUZZ_CHECK(b.shape == a.shape);
  KSSIM_FUZZ_CHECK(b.dtype() == a.dtype());
  KSSIM_FUZZ_CHECK(b.size() == a.size());
  KSSIM_FUZZ_CHECK(a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * dtype_size(a.dtype())) == 0);
  return 0;
}
