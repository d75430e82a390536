#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs this folder's tests where pytest is not installed (e.g. a GPU machine with only pip's PyTorch):
a stand-in `pytest` module with the few features the tests use (parametrize, skipif, fixtures with
params, raises, skip), then every test_* function of every test_*.py, each parametrization separately.
With pytest installed, use `python3 -m pytest unit_tests/python` instead.

  PYTHONPATH=<build>/python python3 unit_tests/python/run_without_pytest.py [-k SUBSTRING] [-v]

Exit status 0 when no test failed.
"""

import contextlib
import importlib
import inspect
import itertools
import pathlib
import re
import sys
import time
import traceback
import types


class Skipped(Exception):
    pass


class _SkipIf:
    def __init__(self, condition, reason=""):
        self.condition, self.reason = bool(condition), reason

    def __call__(self, function):
        function.__dict__.setdefault("_skips", []).append(self)
        return function


class _Mark:
    @staticmethod
    def parametrize(names, values, ids=None):
        def decorate(function):
            function.__dict__.setdefault("_parametrize", []).append((names, list(values), ids))
            return function
        return decorate

    skipif = _SkipIf


def _fixture(params=None):
    def decorate(function):
        function._fixture_params = params
        return function
    return decorate


@contextlib.contextmanager
def _raises(error, match=None):
    try:
        yield
    except error as e:
        if match is not None and not re.search(match, str(e)):
            raise AssertionError(f"{error.__name__} raised, but {str(e)!r} does not match {match!r}") from e
    else:
        raise AssertionError(f"DID NOT RAISE {error.__name__}")


def _skip(reason=""):
    raise Skipped(reason)


def install_stand_in():
    module = types.ModuleType("pytest")
    module.mark, module.fixture, module.raises, module.skip = _Mark(), _fixture, _raises, _skip
    sys.modules["pytest"] = module


def _label(value):
    return getattr(value, "__name__", None) or str(value)


class _FixtureValue:
    def __init__(self, fixture, param):
        self.fixture, self.request = fixture, types.SimpleNamespace(param=param)

    def value(self):
        return self.fixture(self.request)


def _cases(function, fixtures):
    """(name suffix, keyword arguments) for every combination of the function's parametrizations and the
    fixtures it takes."""
    axes = []
    for names, values, ids in function.__dict__.get("_parametrize", []):
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        entries = []
        for i, value in enumerate(values):
            args = dict(zip(names, value)) if len(names) > 1 else {names[0]: value}
            if isinstance(ids, list):
                label = ids[i]
            elif callable(ids):
                label = ids(value)
            else:
                label = "-".join(_label(args[n]) for n in names)
            entries.append((label, args))
        axes.append(entries)
    for name in inspect.signature(function).parameters:
        if name in fixtures:
            params = fixtures[name]._fixture_params or [None]
            axes.append([(_label(p), {name: _FixtureValue(fixtures[name], p)}) for p in params])
    for combination in itertools.product(*axes):
        kwargs = {}
        for _, args in combination:
            kwargs.update(args)
        yield "-".join(str(label) for label, _ in combination), kwargs


def main():
    here = pathlib.Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    install_stand_in()
    select = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    verbose = "-v" in sys.argv
    conftest = importlib.import_module("conftest")
    fixtures = {n: f for n, f in vars(conftest).items() if hasattr(f, "_fixture_params")}
    if hasattr(conftest, "pytest_report_header"):
        print(conftest.pytest_report_header(None))
    passed = failed = skipped = 0
    start = time.time()
    for path in sorted(here.glob("test_*.py")):
        module = importlib.import_module(path.stem)
        module_skip = getattr(module, "pytestmark", None)
        for name, function in list(vars(module).items()):
            if not (name.startswith("test_") and inspect.isfunction(function)):
                continue
            for suffix, kwargs in _cases(function, fixtures):
                test_id = f"{path.name}::{name}[{suffix}]" if suffix else f"{path.name}::{name}"
                if select and select not in test_id:
                    continue
                skips = function.__dict__.get("_skips", []) + ([module_skip] if module_skip else [])
                try:
                    reason = next((s.reason for s in skips if s.condition), None)
                    if reason is not None:
                        raise Skipped(reason)
                    function(**{k: v.value() if isinstance(v, _FixtureValue) else v for k, v in kwargs.items()})
                    passed += 1
                    if verbose:
                        print(f"PASSED  {test_id}", flush=True)
                except Skipped as e:
                    skipped += 1
                    if verbose:
                        print(f"SKIPPED {test_id}: {e}", flush=True)
                except Exception:  # noqa: BLE001 (a failing test, reported)
                    failed += 1
                    print(f"FAILED  {test_id}\n{traceback.format_exc()}", flush=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped in {time.time() - start:.1f} s")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
