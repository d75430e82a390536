// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Shared by the libFuzzer targets: the input as bytes, a check that aborts (a fuzzer "crash") when a
// property of the readers does not hold, the one allowed failure (kssim::io::Error), and the properties
// every decoded image has.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>

#include "io/Error.hpp"
#include "io/Image.hpp"

namespace kssim_fuzz {

inline std::span<const std::byte> bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

#define KSSIM_FUZZ_CHECK(cond)                                                            \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "kssim fuzz: property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

// parse(bytes) for the input, or nothing when the reader refuses it with kssim::io::Error, the one failure
// allowed; any other exception escapes to libFuzzer as a crash.
template <class Parse>
auto parse_or_refuse(const std::uint8_t* data, std::size_t size, const Parse& parse)
    -> std::optional<decltype(parse(bytes(data, size)))> {
  try {
    return parse(bytes(data, size));
  } catch (const kssim::io::Error&) {
    return std::nullopt;
  }
}

// An image reader's properties: decode(bytes) decodes the input or refuses it; a decoded image passes
// check_image, converts to a (1, C, H, W) array, and passes check(image), the format's own properties.
template <class Decode, class Check>
int check_image_reader(const std::uint8_t* data, std::size_t size, const Decode& decode, const Check& check) {
  const auto im = parse_or_refuse(data, size, decode);
  if (!im) return 0;
  kssim::io::check_image(*im);  // must not throw for a decoded image
  const kssim::io::Array a = kssim::io::image_to_array(*im);
  KSSIM_FUZZ_CHECK(a.size() == std::size_t(im->width) * im->height * im->color_channels());
  check(*im);
  return 0;
}

// An image that went through encode -> decode came back unchanged.
inline void check_same_image(const kssim::io::Image& back, const kssim::io::Image& im) {
  KSSIM_FUZZ_CHECK(back.width == im.width && back.height == im.height && back.channels == im.channels);
  KSSIM_FUZZ_CHECK(back.max_value == im.max_value);
  KSSIM_FUZZ_CHECK(back.samples == im.samples);
}

}  // namespace kssim_fuzz
