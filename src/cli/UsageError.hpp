// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Bad usage or bad input detected by the command-line tool itself (as opposed to a malformed file, which is
// an io::Error). Both end the tool with exit status 2 and one "kssim: error:" line.

#include <stdexcept>
#include <string>

namespace kssim::cli {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace kssim::cli
