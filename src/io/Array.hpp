// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A dense host array of float32 or float64 in C order with its shape: what the .npy reader returns, what the
// image loaders turn images into, and what the writers take.

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

namespace kssim::io {

// Float16: the dtype of a float16 .npy file only; its values are widened to float32 as they are read (exactly:
// every float16 value is a float32 value), so an Array itself is float32 or float64.
enum class DType { Float32, Float64, Float16 };

// "float32", "float64" or "float16".
const char* dtype_name(DType dtype);
// Bytes per element: 4, 8 or 2.
std::size_t dtype_size(DType dtype);

// "(2, 3, 4)"; "()" for a scalar and "(5,)" for one axis, as Python writes tuples.
std::string shape_string(const std::vector<std::size_t>& shape);

// The number of elements of `shape`; throws io::Error when the product overflows std::size_t.
std::size_t element_count(const std::vector<std::size_t>& shape);

struct Array {
  std::vector<std::size_t> shape;
  std::variant<std::vector<float>, std::vector<double>> values;

  Array() = default;
  Array(std::vector<std::size_t> s, std::vector<float> v) : shape(std::move(s)), values(std::move(v)) {}
  Array(std::vector<std::size_t> s, std::vector<double> v) : shape(std::move(s)), values(std::move(v)) {}

  DType dtype() const { return values.index() == 0 ? DType::Float32 : DType::Float64; }
  std::size_t size() const {
    return std::visit([](const auto& v) { return v.size(); }, values);
  }
  std::size_t rank() const { return shape.size(); }
  const void* data() const {
    return std::visit([](const auto& v) { return static_cast<const void*>(v.data()); }, values);
  }
};

}  // namespace kssim::io
