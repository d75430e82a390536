// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The long sections of `kssim --help` and `kssim compare --help` (CLI11 generates the option lists).

#include <string>

namespace kssim::cli {

// The description printed above the options of `kssim compare --help`.
std::string compare_description();
// Inputs, outputs, colormap, exit status and examples, printed below the options of `kssim compare --help`.
std::string compare_footer();
// The short description of the tool for `kssim --help`.
std::string main_description();
// CLI11's help with trailing spaces removed and runs of blank lines folded into one.
std::string tidy_help(const std::string& help);

}  // namespace kssim::cli
