// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/WebpImage.hpp"

#include "io/Error.hpp"

#include <webp/decode.h>

#include <cstring>
#include <string>

namespace kssim::io {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("invalid WebP file: " + what); }

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the file is truncated";
    default: return "unknown error";
  }
}

WebPBitstreamFeatures features(std::span<const std::byte> bytes) {
  if (!looks_like_webp(bytes)) fail("missing the RIFF/WEBP header");
  WebPBitstreamFeatures f;
  const VP8StatusCode s = WebPGetFeatures(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f);
  if (s != VP8_STATUS_OK) fail(status_text(s));
  if (f.has_animation) fail("animated WebP files are not supported");
  check_image_size("WebP", std::uint64_t(f.width), std::uint64_t(f.height), f.has_alpha ? 4 : 3);
  return f;
}

}  // namespace

bool looks_like_webp(std::span<const std::byte> bytes) {
  return bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 &&
         std::memcmp(bytes.data() + 8, "WEBP", 4) == 0;
}

ImageInfo webp_info(std::span<const std::byte> bytes) {
  const WebPBitstreamFeatures f = features(bytes);
  return ImageInfo{f.width, f.height, f.has_alpha ? 4 : 3, false};
}

Image decode_webp(std::span<const std::byte> bytes) {
  const ImageInfo info = webp_info(bytes);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) throw Error("cannot initialise libwebp");
  std::vector<std::uint8_t> pixels(std::size_t(info.width) * std::size_t(info.height) * std::size_t(info.channels));
  config.output.colorspace = info.channels == 4 ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = pixels.data();
  config.output.u.RGBA.stride = info.width * info.channels;
  config.output.u.RGBA.size = pixels.size();
  const VP8StatusCode s = WebPDecode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);  // frees nothing of ours (external memory), but is the documented pairing
  if (s != VP8_STATUS_OK) fail(status_text(s));
  return eight_bit_image(info, pixels);
}

}  // namespace kssim::io
