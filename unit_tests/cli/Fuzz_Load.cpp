// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer entry point for the kssim file readers (.npy, PNG, PGM/PPM): every input must either load or
// throw kssim::io::Error. Built when KSSIM_ENABLE_FUZZERS is ON with clang:
//   build/bin/kssim_fuzz_load -max_len=4096 corpus/

#include "io/Error.hpp"
#include "io/Load.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)kssim::io::load_array(std::span(reinterpret_cast<const std::byte*>(data), size));
  } catch (const kssim::io::Error&) {
  }
  return 0;
}
