// libFuzzer target: the PNG reader (libpng). Any input either decodes or throws kssim::io::Error; a decoded
// image passes check_image, converts to a (1, C, H, W) array, and survives encode -> decode unchanged.
#include "FuzzCommon.hpp"
#include "io/Error.hpp"
#include "io/Image.hpp"
#include "io/PngImage.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  Image im;
  try {
    im = decode_png(kssim_fuzz::bytes(data, size));
  } catch (const Error&) {
    return 0;
  }
  check_image(im);  // must not throw for a decoded image
  KSSIM_FUZZ_CHECK(im.max_value == 255 || im.max_value == 65535);
  const Array a = image_to_array(im);
  KSSIM_FUZZ_CHECK(a.size() == std::size_t(im.width) * im.height * im.color_channels());
  const Image back = decode_png(encode_png(im));
  KSSIM_FUZZ_CHECK(back.width == im.width && back.height == im.height && back.channels == im.channels);
  KSSIM_FUZZ_CHECK(back.max_value == im.max_value);
  KSSIM_FUZZ_CHECK(back.samples == im.samples);
  return 0;
}
