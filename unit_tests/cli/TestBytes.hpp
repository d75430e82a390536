// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Byte-buffer and image helpers shared by the kssim io unit tests.

#include "io/Image.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kssim::io::test {

inline std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> b(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) b[i] = std::byte(static_cast<unsigned char>(s[i]));
  return b;
}

inline std::vector<std::byte> concat(std::vector<std::byte> a, const std::vector<std::byte>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline void put_be32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int k = 3; k >= 0; --k) out.push_back(std::byte((v >> (8 * k)) & 0xff));
}

// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), bit by bit: slow but plenty for tests.
inline std::uint32_t crc32(std::span<const std::byte> data) {
  std::uint32_t crc = 0xffffffffu;
  for (std::byte b : data) {
    crc ^= std::to_integer<std::uint32_t>(b);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

// One PNG chunk: length, type, data, CRC of type + data.
inline std::vector<std::byte> png_chunk(std::string_view type, const std::vector<std::byte>& data) {
  std::vector<std::byte> out;
  put_be32(out, std::uint32_t(data.size()));
  std::vector<std::byte> typed = bytes_of(type);
  typed.insert(typed.end(), data.begin(), data.end());
  out.insert(out.end(), typed.begin(), typed.end());
  put_be32(out, crc32(typed));
  return out;
}

// A w x h image whose sample i is (i * step + offset) mod (max_value + 1): a fixed pattern over the whole
// range of the depth.
inline Image patterned_image(int w, int h, int channels, int max_value, std::uint32_t step, std::uint32_t offset) {
  Image im;
  im.width = w;
  im.height = h;
  im.channels = channels;
  im.max_value = max_value;
  im.samples.resize(im.sample_count());
  for (std::size_t i = 0; i < im.samples.size(); ++i)
    im.samples[i] = std::uint16_t((i * step + offset) % (max_value + 1u));
  return im;
}

}  // namespace kssim::io::test
