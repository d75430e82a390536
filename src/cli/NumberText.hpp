// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Numbers as the tool prints them: the shortest decimal that reads back as the same double (std::to_chars),
// so 0.49189420499999997 prints as 0.491894205 and 1 as 1, with no digit lost.

#include <charconv>
#include <string>

namespace kssim::cli {

inline std::string number_text(double v) {
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

}  // namespace kssim::cli
