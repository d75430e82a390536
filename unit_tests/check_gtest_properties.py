#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CTest test meta.gtest_properties: every GoogleTest program registered with kssim_gtests
(unit_tests/CMakeLists.txt) has all its cases in CTest, each with the program's whole ENVIRONMENT and its
LABELS.

Issue 30: a ";" inside gtest_discover_tests' PROPERTIES split the environment, so each case ran with
OMP_NUM_THREADS only and had no label (`ctest -L gpu_paths` found 0 tests) while every test still passed.
This reads what CTest itself will run (`ctest --show-only=json-v1`), and asks each program for its cases
(`--gtest_list_tests`, as gtest_discover_tests does).

    check_gtest_properties.py --ctest CTEST --build-dir DIR --manifest gtest_programs.json

The manifest (written by CMake) lists, per program: its executable, environment, labels, and whether each
case is its own CTest test (per_case) or the whole program is one, or `shards` (GoogleTest sharding).
"""
import argparse
import json
import os
import re
import subprocess
import sys


def gtest_cases(executable):
    """Number of test cases the program lists (lines indented under a "Suite." line)."""
    out = subprocess.run([executable, "--gtest_list_tests"], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    return sum(1 for line in out.splitlines() if line.startswith("  "))


def properties(test):
    """A CTest JSON test's properties as {name: value}; list-valued ones as lists."""
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def ctest_count(ctest, build_dir, label):
    """What `ctest -N -L ^label$` counts (the command issue 30 was reported with)."""
    out = subprocess.run([ctest, "--test-dir", build_dir, "-N", "-L", f"^{re.escape(label)}$"], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"Total Tests: (\d+)", out)
    return int(m.group(1)) if m else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ctest", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--manifest", required=True)
    args = ap.parse_args()

    with open(args.manifest) as f:
        programs = json.load(f)["programs"]
    shown = subprocess.run([args.ctest, "--test-dir", args.build_dir, "--show-only=json-v1"], check=True,
                           capture_output=True, text=True).stdout
    tests = json.loads(shown)["tests"]

    errors = []
    expected_per_label = {}
    if not programs:
        errors.append("the manifest lists no GoogleTest program")
    for prog in programs:
        name, exe = prog["program"], prog["executable"]
        if not os.path.exists(exe):
            errors.append(f"{name}: {exe} is not built (this test checks a built tree)")
            continue
        mine = [t for t in tests if t.get("command") and t["command"][0] == exe]
        want = gtest_cases(exe) if prog["per_case"] else prog.get("shards", 1)
        if want == 0:
            errors.append(f"{name}: the program lists no test case")
        if len(mine) != want:
            errors.append(f"{name}: CTest has {len(mine)} test(s) running {exe}, expected {want}")
        bad = 0
        for t in mine:
            props = properties(t)
            env = props.get("ENVIRONMENT", [])
            labels = props.get("LABELS", [])
            missing = [v for v in prog["environment"] if v not in env] + \
                      [f"label {lab}" for lab in prog["labels"] if lab not in labels]
            # A split list leaves properties named after its pieces, e.g. "OMP_PROC_BIND=false".
            stray = [p for p in props if "=" in p]
            if missing or stray:
                bad += 1
                if bad <= 3:
                    errors.append(f"{name}: test '{t['name']}' lacks {missing}; stray properties {stray}; "
                                  f"ENVIRONMENT={env} LABELS={labels}")
        if bad > 3:
            errors.append(f"{name}: ... and {bad - 3} more test(s) like these")
        for lab in prog["labels"]:
            expected_per_label[lab] = expected_per_label.get(lab, 0) + want
        print(f"{name}: {len(mine)} CTest test(s) (expected {want}), labels {prog['labels']}, "
              f"environment {prog['environment']}: {'OK' if bad == 0 and len(mine) == want else 'FAIL'}")

    # Other tests may share a label (e.g. reliability.edge), hence "at least".
    for lab, want in sorted(expected_per_label.items()):
        got = ctest_count(args.ctest, args.build_dir, lab)
        print(f"ctest -N -L ^{lab}$: {got} test(s), at least {want} expected")
        if got < want:
            errors.append(f"`ctest -N -L ^{lab}$` finds {got} test(s), expected at least {want}")

    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
