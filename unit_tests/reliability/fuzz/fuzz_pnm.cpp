// libFuzzer target: the PGM/PPM reader. Any input either decodes or throws kssim::io::Error; a decoded image
// passes check_image, converts to a (1, C, H, W) array, and survives encode (binary and plain) -> decode.
#include "FuzzCommon.hpp"
#include "io/PnmImage.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kssim::io;
  const auto im = kssim_fuzz::parse_or_refuse(data, size, [](auto b) { return decode_pnm(b); });
  if (!im) return 0;
  kssim_fuzz::check_decoded_image(*im);
  KSSIM_FUZZ_CHECK(im->channels == 1 || im->channels == 3);
  for (bool plain : {false, true}) kssim_fuzz::check_same_image(decode_pnm(encode_pnm(*im, plain)), *im);
  return 0;
}
