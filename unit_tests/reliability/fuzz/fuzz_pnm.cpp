// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the PGM/PPM reader. Any input either decodes or throws kssim::io::Error; a decoded image
// passes check_image, converts to a (1, C, H, W) array, and survives encode (binary and plain) -> decode.
#include "FuzzCommon.hpp"
#include "io/PnmImage.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  return kssim_fuzz::check_image_reader(data, size, [](auto b) { return decode_pnm(b); }, [](const Image& im) {
    KSSIM_FUZZ_CHECK(im.channels == 1 || im.channels == 3);
    for (bool plain : {false, true}) kssim_fuzz::check_same_image(decode_pnm(encode_pnm(im, plain)), im);
  });
}
