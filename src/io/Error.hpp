// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The one exception type of the kssim file readers and writers: a malformed, truncated or unsupported file,
// or a file that cannot be read or written. what() is a single line meant for the user.

#include <stdexcept>
#include <string>

namespace kssim::io {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace kssim::io
