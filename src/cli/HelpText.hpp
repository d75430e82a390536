#pragma once
// The long sections of `kssim --help` and `kssim compare --help` (CLI11 generates the option lists).

#include <string>

namespace kssim::cli {

// The description printed above the options of `kssim compare --help`.
std::string compare_description();
// Inputs, outputs, colormap, exit status and examples, printed below the options of `kssim compare --help`
// (and of `kssim --help`).
std::string compare_footer();
// The short description of the tool for `kssim --help`.
std::string main_description();

}  // namespace kssim::cli
