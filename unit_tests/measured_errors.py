#!/usr/bin/env python3
"""Summarises the errors the tests recorded (unit_tests/ErrorRecord.hpp) in a GoogleTest JSON report: the
largest value of every property per value type, over every test and backend whose name matches.

    kssim_unit_tests --gtest_filter='MsSsim*:Masked*' --gtest_output=json:errors.json
    python3 unit_tests/measured_errors.py errors.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        report = json.load(f)
    largest = {}
    for suite in report["testsuites"]:
        family, _, config = suite["name"].partition("/")
        dtype = "float" if "_float" in config else "double"
        for test in suite["testsuite"]:
            for key, value in test.items():
                if key.endswith("_error"):
                    k = (family, dtype, key)
                    largest[k] = max(largest.get(k, 0.0), float(value))
    for (family, dtype, key), value in sorted(largest.items()):
        print("%-8s %-7s %-22s %.3g" % (family, dtype, key, value))


if __name__ == "__main__":
    main(sys.argv[1])
