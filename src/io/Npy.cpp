// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/Npy.hpp"

#include "io/Error.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace kssim::io {
namespace {

constexpr std::string_view magic = "\x93NUMPY";

[[noreturn]] void fail(const std::string& what) { throw Error("invalid .npy file: " + what); }

// A cursor over the header dictionary, a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool at_end() const { return i_ == s_.size(); }
  bool accept(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* where) {
    if (!accept(c)) fail(std::string("header: expected '") + c + "' " + where);
  }
  bool peek_is(char c) {
    skip_space();
    return i_ < s_.size() && s_[i_] == c;
  }

  std::string string_literal() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail("header: expected a quoted string");
    const char quote = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\') fail("header: escape sequences are not supported");
      out += s_[i_++];
    }
    if (i_ >= s_.size()) fail("header: unterminated string");
    ++i_;
    return out;
  }

  bool boolean_literal() {
    skip_space();
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    fail("header: 'fortran_order' must be True or False");
  }

  std::size_t integer_literal() {
    skip_space();
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("header: expected a non-negative integer in 'shape'");
    std::size_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      const std::size_t d = std::size_t(s_[i_] - '0');
      if (v > (SIZE_MAX - d) / 10) fail("header: a shape entry is too large");
      v = v * 10 + d;
      ++i_;
    }
    return v;
  }

  std::vector<std::size_t> shape_tuple() {
    expect('(', "to start 'shape'");
    std::vector<std::size_t> shape;
    bool trailing_comma = false;
    while (!accept(')')) {
      if (!shape.empty() && !trailing_comma) fail("header: expected ',' or ')' in 'shape'");
      if (shape.size() >= 32) fail("header: 'shape' has more than 32 axes");
      shape.push_back(integer_literal());
      trailing_comma = accept(',');
    }
    if (shape.size() == 1 && !trailing_comma) fail("header: a one-element 'shape' must be written '(n,)'");
    return shape;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

struct Header {
  DType dtype;
  bool fortran_order;
  std::vector<std::size_t> shape;
};

DType parse_descr(const std::string& descr) {
  if (descr == "<f4") return DType::Float32;
  if (descr == "<f8") return DType::Float64;
  if (descr == "<f2") return DType::Float16;
  if (descr == ">f2" || descr == ">f4" || descr == ">f8")
    fail("big-endian data (dtype '" + descr + "') is not supported; save it as little-endian ('<" + descr.substr(1) +
         "')");
  fail("unsupported dtype '" + descr + "' (only float16 '<f2', float32 '<f4' and float64 '<f8' are supported)");
}

Header parse_header(std::string_view text) {
  HeaderParser p(text);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<std::size_t>> shape;
  p.expect('{', "at the start of the header");
  bool trailing_comma = true;
  while (!p.accept('}')) {
    if (!trailing_comma) fail("header: expected ',' or '}' in the dictionary");
    const std::string key = p.string_literal();
    p.expect(':', "after a dictionary key");
    if (key == "descr") {
      if (descr) fail("header: duplicate key 'descr'");
      if (!p.peek_is('\'') && !p.peek_is('"')) fail("unsupported dtype (structured or non-string 'descr')");
      descr = p.string_literal();
    } else if (key == "fortran_order") {
      if (fortran) fail("header: duplicate key 'fortran_order'");
      fortran = p.boolean_literal();
    } else if (key == "shape") {
      if (shape) fail("header: duplicate key 'shape'");
      shape = p.shape_tuple();
    } else {
      fail("header: unexpected key '" + key + "'");
    }
    trailing_comma = p.accept(',');
  }
  p.skip_space();
  if (!p.at_end()) fail("header: unexpected text after the dictionary");
  if (!descr || !fortran || !shape) fail("header: 'descr', 'fortran_order' and 'shape' are all required");
  Header h{parse_descr(*descr), *fortran, std::move(*shape)};
  if (h.fortran_order) fail("Fortran-ordered arrays are not supported; save a C-ordered array (np.ascontiguousarray)");
  return h;
}

std::uint32_t read_le(std::span<const std::byte> b, std::size_t offset, int width) {
  std::uint32_t v = 0;
  for (int k = width - 1; k >= 0; --k) v = (v << 8) | std::to_integer<std::uint32_t>(b[offset + std::size_t(k)]);
  return v;
}

template <class T>
std::vector<T> copy_little_endian(std::span<const std::byte> data, std::size_t count) {
  std::vector<T> out(count);
  if (count > 0) std::memcpy(out.data(), data.data(), count * sizeof(T));
  if constexpr (std::endian::native == std::endian::big) {
    for (T& v : out) {
      auto* p = reinterpret_cast<unsigned char*>(&v);
      std::reverse(p, p + sizeof(T));
    }
  }
  return out;
}

// IEEE binary16 bits to the float32 of the same value (every binary16 value is one), without a 16-bit type.
float widen_half(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // Inf, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // normal: rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: mantissa * 2^-24, normal in float32
    int shift = 0;
    std::uint32_t m = mantissa;
    while (!(m & 0x400)) m <<= 1, ++shift;
    bits = sign | (std::uint32_t(113 - shift) << 23) | ((m & 0x3ff) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::vector<float> widen_little_endian_halves(std::span<const std::byte> data, std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = widen_half(std::uint16_t(read_le(data, 2 * i, 2)));
  return out;
}

}  // namespace

bool looks_like_npy(std::span<const std::byte> bytes) {
  return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

namespace {

struct Located {
  Header header;
  std::size_t data_start;
};

Located locate(std::span<const std::byte> bytes) {
  if (!looks_like_npy(bytes)) fail("missing the \\x93NUMPY magic string");
  if (bytes.size() < 8) fail("truncated before the format version");
  const int major = std::to_integer<int>(bytes[6]), minor = std::to_integer<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail("unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  const int len_width = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + std::size_t(len_width);
  if (bytes.size() < header_start) fail("truncated before the header length");
  const std::size_t header_len = read_le(bytes, 8, len_width);
  if (bytes.size() - header_start < header_len) fail("truncated inside the header");
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  if (text.empty() || text.back() != '\n') fail("the header does not end with a newline");
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r'))
      fail("the header contains non-ASCII or control characters");
  return {parse_header(text), header_start + header_len};
}

}  // namespace

NpyInfo npy_info(std::span<const std::byte> bytes) {
  Located l = locate(bytes);
  return {l.header.dtype, std::move(l.header.shape), l.data_start};
}

Array parse_npy(std::span<const std::byte> bytes) {
  const Located l = locate(bytes);
  const Header& h = l.header;
  const std::size_t count = element_count(h.shape);
  const std::size_t item = dtype_size(h.dtype);
  const std::span<const std::byte> data = bytes.subspan(l.data_start);
  if (count > data.size() / item)
    fail("truncated: the header announces " + shape_string(h.shape) + " " + dtype_name(h.dtype) + " (" +
         (count > SIZE_MAX / item ? std::string("too many") : std::to_string(count * item)) + " bytes of data), got " +
         std::to_string(data.size()) + " bytes");
  if (data.size() != count * item)
    fail(std::to_string(data.size() - count * item) + " unexpected bytes after the array data");
  if (h.dtype == DType::Float32) return Array(h.shape, copy_little_endian<float>(data, count));
  if (h.dtype == DType::Float16) return Array(h.shape, widen_little_endian_halves(data, count));
  return Array(h.shape, copy_little_endian<double>(data, count));
}

std::vector<std::byte> encode_npy_header(DType dtype, const std::vector<std::size_t>& shape) {
  std::string dict = std::string("{'descr': '") + (dtype == DType::Float32 ? "<f4" : "<f8") +
                     "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary, as NumPy does.
  auto padded = [&](std::size_t prefix) {
    std::string h = dict;
    const std::size_t unpadded = prefix + h.size() + 1;
    h.append((64 - unpadded % 64) % 64, ' ');
    return h + '\n';
  };
  std::string header = padded(10);
  int major = 1;
  if (header.size() > 65535) {
    header = padded(12);
    major = 2;
  }
  std::vector<std::byte> out;
  for (char c : magic) out.push_back(std::byte(static_cast<unsigned char>(c)));
  out.push_back(std::byte(major));
  out.push_back(std::byte(0));
  const std::uint32_t len = std::uint32_t(header.size());
  for (int k = 0; k < (major == 1 ? 2 : 4); ++k) out.push_back(std::byte((len >> (8 * k)) & 0xff));
  for (char c : header) out.push_back(std::byte(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::byte> encode_npy(const Array& array) {
  if (element_count(array.shape) != array.size())
    throw Error("encode_npy: shape " + shape_string(array.shape) + " does not match " + std::to_string(array.size()) +
                " values");
  std::vector<std::byte> out = encode_npy_header(array.dtype(), array.shape);
  const std::size_t item = dtype_size(array.dtype());
  const std::size_t data_start = out.size();
  out.resize(data_start + array.size() * item);
  if (array.size() > 0) std::memcpy(out.data() + data_start, array.data(), array.size() * item);
  if constexpr (std::endian::native == std::endian::big) {
    for (std::size_t i = data_start; i < out.size(); i += item) std::reverse(out.begin() + i, out.begin() + i + item);
  }
  return out;
}

}  // namespace kssim::io
