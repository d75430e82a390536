#pragma once
// The parsed command line of `kssim compare`, before validation.

#include <string>

namespace kssim::cli {

struct CompareOptions {
  std::string a, b;               // input files
  std::string padding = "valid";  // "valid" or "same"
  int window = 11;
  double sigma = 1.5;
  double k1 = 0.01;
  double k2 = 0.03;
  double data_range = 1.0;
  int dims = 2;
  bool json = false;
  bool per_image = false;
  std::string map;     // empty: no map
  std::string grad_a;  // empty: no gradient
  std::string grad_b;
  bool repeat_given = false;
  int repeat = 0;
};

}  // namespace kssim::cli
