#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Summarises the errors the tests recorded (unit_tests/ErrorRecord.hpp) in a GoogleTest JSON report: the
largest value of every property per value type, over every test and backend whose name matches.

    kssim_unit_tests --gtest_filter='MsSsim*:Masked*' --gtest_output=json:errors.json
    python3 unit_tests/measured_errors.py errors.json

Properties ending in "_error" are errors; those ending in "_in_bounds" (HalfTests.hpp) are the largest error
in units of its bound (<= 1 passes); "_rel_l2" relative L2 errors. The 16-bit tests' configurations are named
<backend>_<storage>_to_<output>: their "value type" column is <storage>_to_<output>."""
import json
import sys


def main(path):
    with open(path) as f:
        report = json.load(f)
    largest = {}
    for suite in report["testsuites"]:
        # SSIM2D/<config>, KokkosHalf/Half/<config> (family KokkosHalf/Half), or a suite without configurations
        family, _, config = suite["name"].rpartition("/") if "/" in suite["name"] else (suite["name"], "", "")
        if "_to_" in config:  # HalfTests.hpp: <backend>_<storage>_to_<output>
            dtype = config.partition("_")[2]
        else:
            dtype = "float" if "_float" in config else "double"
        for test in suite["testsuite"]:
            for key, value in test.items():
                if key.endswith(("_error", "_in_bounds", "_rel_l2")):
                    k = (family, dtype, key)
                    largest[k] = max(largest.get(k, 0.0), float(value))
    for (family, dtype, key), value in sorted(largest.items()):
        print("%-11s %-14s %-22s %.3g" % (family, dtype, key, value))


if __name__ == "__main__":
    main(sys.argv[1])
