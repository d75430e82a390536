// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/Array.hpp"

#include "io/Error.hpp"

#include <limits>

namespace kssim::io {

const char* dtype_name(DType dtype) {
  return dtype == DType::Float32 ? "float32" : dtype == DType::Float64 ? "float64" : "float16";
}

std::size_t dtype_size(DType dtype) { return dtype == DType::Float32 ? 4 : dtype == DType::Float64 ? 8 : 2; }

std::string shape_string(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::size_t element_count(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (std::size_t e : shape) {
    if (e != 0 && n > std::numeric_limits<std::size_t>::max() / e)
      throw Error("array shape " + shape_string(shape) + " has too many elements");
    n *= e;
  }
  return n;
}

}  // namespace kssim::io
