// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of the strict .npy reader and writer (src/io/Npy.*).

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/Npy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace kssim::io {
namespace {

using test::bytes_of;
using test::concat;

// A .npy file with a hand-written header (padded and newline-terminated) and `data_bytes` zero bytes.
std::vector<std::byte> npy_with_header(const std::string& dict, std::size_t data_bytes, int major = 1) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY", 6) + char(major) + char(0);
  const std::uint32_t len = std::uint32_t(header.size());
  for (std::size_t k = 0; k < prefix - 8; ++k) file += char((len >> (8 * k)) & 0xff);
  return concat(bytes_of(file + header), std::vector<std::byte>(data_bytes));
}

std::string dict(const std::string& descr, const std::string& fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

template <class T>
Array make_array(std::vector<std::size_t> shape) {
  std::vector<T> v(element_count(shape));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = T(0.25) * T(i) - T(3);
  return Array(std::move(shape), std::move(v));
}

TEST(Npy, RoundTripsBothDtypesAndManyRanks) {
  const std::vector<std::vector<std::size_t>> shapes = {{}, {5}, {2, 3}, {1, 3, 4, 5}, {2, 1, 3, 4, 5}, {0, 4}};
  for (const auto& shape : shapes) {
    for (const Array& a : {make_array<float>(shape), make_array<double>(shape)}) {
      const auto bytes = encode_npy(a);
      const Array b = parse_npy(bytes);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.dtype(), a.dtype());
      EXPECT_EQ(b.values, a.values);
    }
  }
}

TEST(Npy, DataStartsOn64ByteBoundary) {
  const auto bytes = encode_npy(make_array<float>({3, 7}));
  const std::size_t header_len = std::to_integer<std::size_t>(bytes[8]) | std::to_integer<std::size_t>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + header_len + 3 * 7 * 4);
}

TEST(Npy, AcceptsHeaderVariants) {
  for (const std::string& d : {
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
           std::string("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,3,)}"),
           std::string("{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}"),
           std::string("{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 ) , }"),
       }) {
    for (int major : {1, 2, 3}) {
      const Array a = parse_npy(npy_with_header(d, 24, major));
      EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 3})) << d;
      EXPECT_EQ(a.dtype(), DType::Float32);
    }
  }
  EXPECT_EQ(parse_npy(npy_with_header(dict("<f8", "False", "(4,)"), 32)).shape, std::vector<std::size_t>{4});
  EXPECT_EQ(parse_npy(npy_with_header(dict("<f8", "False", "()"), 8)).size(), 1u);
}

TEST(Npy, RejectsEveryTruncation) {
  const auto bytes = encode_npy(make_array<double>({2, 3}));
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(parse_npy(std::span(bytes).first(n)), Error) << "prefix of " << n << " bytes";
}

TEST(Npy, RejectsTrailingData) {
  auto bytes = encode_npy(make_array<float>({2, 3}));
  bytes.push_back(std::byte(0));
  EXPECT_THROW(parse_npy(bytes), Error);
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_THROW(parse_npy(npy_with_header(dict("<f4", "True", "(2, 3)"), 24)), Error);
}

TEST(Npy, RejectsBigEndian) {
  try {
    parse_npy(npy_with_header(dict(">f8", "False", "(2, 3)"), 48));
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("big-endian"), std::string::npos) << e.what();
  }
}

// float16: every binary16 class (zeros, subnormals, normals, the largest, infinities, NaN) widens to the
// float32 of exactly its value; the header reports the stored dtype.
TEST(Npy, WidensFloat16ExactlyToFloat32) {
  const std::vector<std::pair<std::uint16_t, float>> cases = {
      {0x0000, 0.0f},           {0x8000, -0.0f},           {0x0001, 0x1p-24f},        {0x03ff, 1023 * 0x1p-24f},
      {0x0200, 0x1p-15f},       {0x0400, 0x1p-14f},        {0x3c00, 1.0f},            {0x3555, 0x1.554p-2f},
      {0xc000, -2.0f},          {0x7bff, 65504.0f},        {0x7c00, std::numeric_limits<float>::infinity()},
      {0xfc00, -std::numeric_limits<float>::infinity()}};
  std::string data;
  for (const auto& c : cases) data += std::string{char(c.first & 0xff), char(c.first >> 8)};
  data += std::string{char(0x00), char(0x7e)};  // a quiet NaN
  auto bytes = npy_with_header(dict("<f2", "False", "(" + std::to_string(cases.size() + 1) + ",)"), 0);
  bytes = concat(bytes, bytes_of(data));
  EXPECT_EQ(npy_info(bytes).dtype, DType::Float16);
  const Array a = parse_npy(bytes);
  ASSERT_EQ(a.dtype(), DType::Float32);
  const auto& v = std::get<std::vector<float>>(a.values);
  ASSERT_EQ(v.size(), cases.size() + 1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(v[i], cases[i].second) << "binary16 0x" << std::hex << cases[i].first;
    EXPECT_EQ(std::signbit(v[i]), std::signbit(cases[i].second)) << "binary16 0x" << std::hex << cases[i].first;
  }
  EXPECT_TRUE(std::isnan(v.back()));
  EXPECT_STREQ(dtype_name(DType::Float16), "float16");
  EXPECT_EQ(dtype_size(DType::Float16), 2u);
  // Two bytes per element: one missing byte is a truncation, as for the other dtypes.
  EXPECT_THROW(parse_npy(npy_with_header(dict("<f2", "False", "(3,)"), 5)), Error);
  EXPECT_THROW(parse_npy(npy_with_header(dict(">f2", "False", "(3,)"), 6)), Error);
}

TEST(Npy, RejectsUnsupportedDtypes) {
  for (const char* descr : {"<i4", "<c8", "|u1", "|b1", "<u8", "|O", "<U3", "=f4", "f4", "<f16"})
    EXPECT_THROW(parse_npy(npy_with_header(dict(descr, "False", "(2,)"), 8)), Error) << descr;
  EXPECT_THROW(parse_npy(npy_with_header("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8)),
               Error);
}

TEST(Npy, RejectsMalformedHeaders) {
  const std::vector<std::string> bad = {
      "",                                                           // empty dictionary text
      "{'descr': '<f4', 'fortran_order': False}",                   // missing shape
      "{'descr': '<f4', 'shape': (2,)}",                            // missing fortran_order
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",  // duplicate key
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",      // unknown key
      "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}",    // lower-case boolean
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",     // not a tuple
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",   // double comma
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",   // negative
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,)}",   // Python 2 long
      "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",     // list
      "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",     // missing comma
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",  // trailing text
      "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",     // broken quotes
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",  // overflow
  };
  for (const std::string& d : bad) EXPECT_THROW(parse_npy(npy_with_header(d, 8)), Error) << d;
}

TEST(Npy, RejectsBadMagicVersionAndFraming) {
  auto good = encode_npy(make_array<float>({2}));
  auto bad_magic = good;
  bad_magic[1] = std::byte('n');
  EXPECT_THROW(parse_npy(bad_magic), Error);
  for (auto [major, minor] : {std::pair{0, 0}, {4, 0}, {1, 1}}) {
    auto v = good;
    v[6] = std::byte(major);
    v[7] = std::byte(minor);
    EXPECT_THROW(parse_npy(v), Error);
  }
  auto no_newline = good;
  const std::size_t header_end = 10 + (std::to_integer<std::size_t>(good[8]) | std::to_integer<std::size_t>(good[9]) << 8);
  no_newline[header_end - 1] = std::byte(' ');
  EXPECT_THROW(parse_npy(no_newline), Error);
  auto non_ascii = good;
  non_ascii[header_end - 2] = std::byte(0xE9);
  EXPECT_THROW(parse_npy(non_ascii), Error);
  auto long_header = good;  // header length pointing past the end of the file
  long_header[9] = std::byte(0x7f);
  EXPECT_THROW(parse_npy(long_header), Error);
}

TEST(Npy, RejectsHugeShapesWithoutAllocating) {
  // 2^40 x 2^40 float64 in a tiny file: must fail on the size check, not in the allocator.
  EXPECT_THROW(parse_npy(npy_with_header(dict("<f8", "False", "(1099511627776, 1099511627776)"), 8)), Error);
  EXPECT_THROW(parse_npy(npy_with_header(dict("<f4", "False", "(4611686018427387904,)"), 8)), Error);
  EXPECT_THROW(parse_npy(npy_with_header(dict("<f4", "False", "(1000000000,)"), 8)), Error);
}

TEST(Npy, EncodeRejectsInconsistentArrays) {
  Array a({2, 3}, std::vector<float>(5));
  EXPECT_THROW(encode_npy(a), Error);
}

}  // namespace
}  // namespace kssim::io
