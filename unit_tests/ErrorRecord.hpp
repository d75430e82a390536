// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The errors a test measured against its reference, kept in the test report: record_error(name, e) keeps the
// largest e per name and test as a property ("name": "1.2e-07"), which --gtest_output=json:FILE writes, and
// unit_tests/measured_errors.py summarises (the numbers the documentation quotes).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace kssim_test {

inline void record_error(const std::string& name, double error) {
  static std::map<std::string, double> largest;  // per test and name
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string key = std::string(test->test_suite_name()) + "." + test->name() + "." + name;
  double& e = largest.try_emplace(key, 0.0).first->second;
  e = std::max(e, error);
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", e);
  ::testing::Test::RecordProperty(name, text);
}

}  // namespace kssim_test
