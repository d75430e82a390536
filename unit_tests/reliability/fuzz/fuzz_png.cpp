// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the PNG reader (libpng). Any input either decodes or throws kssim::io::Error; a decoded
// image passes check_image, converts to a (1, C, H, W) array, and survives encode -> decode unchanged.
#include "FuzzCommon.hpp"
#include "io/PngImage.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  return kssim_fuzz::check_image_reader(data, size, [](auto b) { return decode_png(b); }, [](const Image& im) {
    KSSIM_FUZZ_CHECK(im.max_value == 255 || im.max_value == 65535);
    kssim_fuzz::check_same_image(decode_png(encode_png(im)), im);
  });
}
