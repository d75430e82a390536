// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim_reliability: the reliability harness. Runs the edge, random and stability case lists (Cases.hpp) on
// every enabled execution space, for float and double and the LayoutRight, LayoutLeft and LayoutStride
// image Views, against the float64 reference (unit_tests/ReferenceSSIM.hpp), and prints a summary table.
// Exit code 0 when every run passed, 1 on any failure, 2 on a usage error. See README.md.
#include "Harness.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace kssim_rel;

const char* usage_text =
    "usage: kssim_reliability [--mode edge|random|stability|all] [--count N] [--seed S] [--case K]\n"
    "                         [--backend NAME] [--dtype float|double] [--layout right|left|stride]\n"
    "                         [--wide] [--strict] [--list] [--verbose] [--max-report N] [Kokkos options]\n"
    "  --mode        case list to run (default all: edge, random, stability)\n"
    "  --count N     number of random cases (default 500)\n"
    "  --seed S      seed of the random cases (default: drawn and printed)\n"
    "  --wide        random cases from the wide distribution (near-identical pairs, tiny images under\n"
    "                large windows, offset data with zero padding): float may miss the tolerances there\n"
    "  --case K      run only case K of each selected list (with the same --seed for random)\n"
    "  --backend     only this execution space (its Kokkos name, e.g. OpenMP, Serial, Cuda)\n"
    "  --dtype       only this value type;  --layout  only this image layout\n"
    "  --strict      count the failures of cases marked KNOWN BUG as failures\n"
    "  --list        print the cases and exit;  --verbose  print every run\n"
    "  --max-report  failures printed in full (default 20; the summary counts all)\n";

struct Args {
  std::vector<std::string> modes{"edge", "random", "stability"};
  int count = 500;
  std::uint64_t seed = 0;
  bool seed_given = false;
  int only_case = -1;
  std::string backend, dtype, layout;
  bool list = false, verbose = false, wide = false, strict = false;
  int max_report = 20;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "kssim_reliability: " << msg << "\n" << usage_text;
  std::exit(2);
}

Args parse(int argc, char* argv[]) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&](const std::string& v) -> long long {
      try {
        std::size_t used = 0;
        const long long n = std::stoll(v, &used, 0);
        if (used != v.size() || n < 0) throw std::invalid_argument(v);
        return n;
      } catch (const std::exception&) {
        usage_error(arg + " needs a non-negative integer, got '" + v + "'");
      }
    };
    if (arg == "--mode") {
      const std::string m = value();
      if (m == "all")
        a.modes = {"edge", "random", "stability"};
      else if (m == "edge" || m == "random" || m == "stability")
        a.modes = {m};
      else
        usage_error("unknown mode '" + m + "'");
    } else if (arg == "--count") {
      a.count = int(number(value()));
    } else if (arg == "--seed") {
      a.seed = std::uint64_t(number(value()));
      a.seed_given = true;
    } else if (arg == "--case") {
      a.only_case = int(number(value()));
    } else if (arg == "--backend") {
      a.backend = value();
    } else if (arg == "--dtype") {
      a.dtype = value();
      if (a.dtype != "float" && a.dtype != "double") usage_error("--dtype is float or double");
    } else if (arg == "--layout") {
      a.layout = value();
      if (a.layout != "right" && a.layout != "left" && a.layout != "stride")
        usage_error("--layout is right, left or stride");
#if defined(KSSIM_RELIABILITY_STRIDED_ONLY)
      if (a.layout != "stride") usage_error("this build has the stride layout only (KSSIM_RELIABILITY_STRIDED_ONLY)");
#endif
    } else if (arg == "--strict") {
      a.strict = true;
    } else if (arg == "--wide") {
      a.wide = true;
    } else if (arg == "--list") {
      a.list = true;
    } else if (arg == "--verbose") {
      a.verbose = true;
    } else if (arg == "--max-report") {
      a.max_report = int(number(value()));
    } else if (arg == "--help" || arg == "-h") {
      std::cout << usage_text;
      std::exit(0);
    } else if (arg.rfind("--kokkos", 0) == 0) {
      // Kokkos options that Kokkos did not remove (e.g. --kokkos-help): ignore.
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (!a.seed_given) a.seed = std::random_device{}() % 1000000;
  return a;
}

// Every backend the tests run once (TestBackends.hpp: every enabled one, unless the build leaves Serial or the
// host backends out).
template <class F>
void for_each_backend(F&& f) {
  std::vector<std::string> seen;
  auto one = [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    const std::string name = E::name();
    for (const auto& s : seen)
      if (s == name) return;
    seen.push_back(name);
    f(tag);
  };
#if KSSIM_TEST_WITH_SERIAL
  one(static_cast<Kokkos::Serial*>(nullptr));
#endif
#if KSSIM_TEST_WITH_OPENMP
  one(static_cast<Kokkos::OpenMP*>(nullptr));
#endif
#if defined(KOKKOS_ENABLE_THREADS) && KSSIM_TEST_HOST_BACKENDS
  one(static_cast<Kokkos::Threads*>(nullptr));
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  one(static_cast<Kokkos::Cuda*>(nullptr));
#endif
#if defined(KOKKOS_ENABLE_HIP)
  one(static_cast<Kokkos::HIP*>(nullptr));
#endif
}

struct Row {
  long runs = 0, passed = 0, known = 0;
  double value = 0, map = 0, grad = 0;
};

struct Failure {
  std::string what;
  std::vector<std::string> messages;
};

struct Summary {
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  std::map<std::string, std::vector<std::string>> keys;
  std::vector<Failure> failures;
  long relaxed = 0;  // float runs of known-limit cases (relaxed tolerances)
  struct KnownBug {
    std::string what, why, example;
    long failed = 0;
  };
  std::vector<KnownBug> known_bugs;    // cases marked KNOWN BUG that failed
  std::vector<std::string> fixed_bugs;  // ... and those that passed somewhere

  Row& row(const std::string& mode, const std::string& backend, const std::string& dtype) {
    const std::string k = mode + "|" + backend + "|" + dtype;
    if (!rows.count(k)) {
      order.push_back(k);
      keys[k] = {mode, backend, dtype};
    }
    return rows[k];
  }
};

template <class Exec, class T, class L>
void run_one(const Args& args, const Case& cs, const std::vector<double>& x, const std::vector<double>& y,
             const ReferenceResult& ref, Summary& summary) {
  if (!args.layout.empty() && args.layout != L::name) return;
  const RunResult r = cs.shape.volumetric ? run_case<Exec, T, L, 5>(cs, x, y, ref) : run_case<Exec, T, L, 4>(cs, x, y, ref);
  Row& row = summary.row(cs.mode, Exec::name(), type_name<T>());
  ++row.runs;
  if (std::is_same_v<T, float> && cs.float_slack != 1) ++summary.relaxed;
  if (r.passed()) ++row.passed;
  const bool known_bug = !cs.known_bug.empty() && !args.strict;
  if (!known_bug) {
    row.value = worst(row.value, r.value_error);
    row.map = worst(row.map, r.map_error);
    row.grad = worst(row.grad, r.gradient_error);
  }
  const std::string where = std::string(Exec::name()) + " " + type_name<T>() + " " + L::name;
  if (args.verbose)
    std::cout << (r.passed() ? "  ok   " : "  FAIL ") << describe(cs) << " | " << where << " | value "
              << fmt(r.value_error) << " map " << fmt(r.map_error) << " grad " << fmt(r.gradient_error) << "\n";
  if (known_bug) {
    const std::string what = describe(cs);
    if (r.passed()) {
      if (std::find(summary.fixed_bugs.begin(), summary.fixed_bugs.end(), what) == summary.fixed_bugs.end())
        summary.fixed_bugs.push_back(what);
      return;
    }
    ++row.known;
    auto it = std::find_if(summary.known_bugs.begin(), summary.known_bugs.end(),
                           [&](const Summary::KnownBug& b) { return b.what == what; });
    if (it == summary.known_bugs.end())
      it = summary.known_bugs.insert(summary.known_bugs.end(), {what, cs.known_bug, where + ": " + r.failures.front()});
    ++it->failed;
    return;
  }
  if (!r.passed()) summary.failures.push_back({describe(cs) + " | " + where, r.failures});
}

template <class T>
bool dtype_selected(const Args& a) {
  return a.dtype.empty() || a.dtype == type_name<T>();
}

void run_cases(const Args& args, const std::vector<Case>& cases, Summary& summary) {
  for (const Case& cs : cases) {
    if (args.only_case >= 0 && cs.index != args.only_case) continue;
    const Data data = cs.data(cs.shape);
    // One reference per value type, shared when both types see the same (float-representable) data.
    const auto xf = kssim_test::rounded<float>(data.x), yf = kssim_test::rounded<float>(data.y);
    const bool shared = xf == data.x && yf == data.y;
    ReferenceResult ref_f, ref_d;
    if (dtype_selected<float>(args)) ref_f = kssim_test::reference_ssim(cs.shape, xf, yf, cs.ro, true);
    const bool run_double = dtype_selected<double>(args) && cs.run_double;
    if (run_double)
      ref_d = shared && dtype_selected<float>(args) ? ref_f
                                                     : kssim_test::reference_ssim(cs.shape, data.x, data.y, cs.ro, true);
    for_each_backend([&](auto* tag) {
      using E = std::remove_pointer_t<decltype(tag)>;
      if (!args.backend.empty() && args.backend != E::name()) return;
      // Sanitizer builds run the stride layout only (unit_tests/reliability/CMakeLists.txt) and compile only it.
#if !defined(KSSIM_RELIABILITY_STRIDED_ONLY)
      if (dtype_selected<float>(args)) {
        run_one<E, float, Right>(args, cs, xf, yf, ref_f, summary);
        run_one<E, float, Left>(args, cs, xf, yf, ref_f, summary);
      }
      if (run_double) {
        run_one<E, double, Right>(args, cs, data.x, data.y, ref_d, summary);
        run_one<E, double, Left>(args, cs, data.x, data.y, ref_d, summary);
      }
#endif
      if (dtype_selected<float>(args)) run_one<E, float, Strided>(args, cs, xf, yf, ref_f, summary);
      if (run_double) run_one<E, double, Strided>(args, cs, data.x, data.y, ref_d, summary);
    });
  }
}

void print_summary(const Summary& s) {
  std::cout << "\n"
            << std::left << std::setw(12) << "mode" << std::setw(10) << "backend" << std::setw(8) << "dtype"
            << std::right << std::setw(7) << "cases" << std::setw(8) << "passed" << std::setw(7) << "known"
            << std::setw(13) << "worst value"
            << std::setw(13) << "worst map" << std::setw(13) << "worst grad" << "\n";
  for (const auto& k : s.order) {
    const Row& r = s.rows.at(k);
    const auto& key = s.keys.at(k);
    std::cout << std::left << std::setw(12) << key[0] << std::setw(10) << key[1] << std::setw(8) << key[2]
              << std::right << std::setw(7) << r.runs << std::setw(8) << r.passed << std::setw(7) << r.known
              << std::setw(13) << fmt(r.value)
              << std::setw(13) << fmt(r.map) << std::setw(13) << fmt(r.grad) << "\n";
  }
  std::cout << "(cases: runs of case x layout; known: failed runs of cases marked KNOWN BUG, left out of the\n"
               " worst columns; value: max abs error of the means; map: max abs error per pixel; grad: max\n"
               " relative L2 error. Tolerances: value 1e-6 float / 3e-13 double, map 2e-5 / 1.5e-12, grad 1e-5 float /\n"
               " 2e-11 double; cases may carry a measured slack.)\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i)  // before Kokkos, which answers --help with its own options
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << usage_text;
      return 0;
    }
  Kokkos::ScopeGuard kokkos(argc, argv);
  const Args args = parse(argc, argv);

  std::vector<std::string> backends;
  for_each_backend([&](auto* tag) { backends.push_back(std::remove_pointer_t<decltype(tag)>::name()); });
  std::cout << "kssim_reliability: Kokkos " << KOKKOS_VERSION / 10000 << "." << KOKKOS_VERSION / 100 % 100 << "."
            << KOKKOS_VERSION % 100 << ", backends:";
  for (const auto& b : backends) std::cout << " " << b;
  std::cout << ", host concurrency " << Kokkos::DefaultHostExecutionSpace().concurrency() << "\n";

  Summary summary;
  for (const auto& mode : args.modes) {
    std::vector<Case> cases;
    if (mode == "edge")
      cases = edge_cases();
    else if (mode == "stability")
      cases = stability_cases();
    else {
      cases = random_cases(args.seed, args.count, args.wide);
      std::cout << (args.wide ? "random-wide" : "random") << ": " << args.count << " cases from seed " << args.seed
                << " (rerun: kssim_reliability --mode random " << (args.wide ? "--wide " : "") << "--count "
                << args.count << " --seed " << args.seed << ")\n";
    }
    if (args.list) {
      for (const auto& c : cases)
        if (args.only_case < 0 || c.index == args.only_case) std::cout << describe(c) << "\n";
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run_cases(args, cases, summary);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << mode << ": " << (args.only_case >= 0 ? 1 : cases.size()) << " cases in " << std::fixed
              << std::setprecision(1) << secs << " s\n"
              << std::defaultfloat;
  }
  if (args.list) return 0;

  int shown = 0;
  for (const auto& f : summary.failures) {
    if (shown++ >= args.max_report) break;
    std::cout << "FAIL " << f.what << "\n";
    for (const auto& m : f.messages) std::cout << "     " << m << "\n";
  }
  if (int(summary.failures.size()) > args.max_report)
    std::cout << "... and " << summary.failures.size() - args.max_report << " more failed runs\n";
  print_summary(summary);
  if (summary.relaxed)
    std::cout << summary.relaxed << " float runs are known-limit cases checked with relaxed tolerances "
                 "(\"float tolerances xK\" in --list; README.md, Known limits)\n";
  for (const auto& b : summary.known_bugs)
    std::cout << "KNOWN BUG " << b.what << "\n     " << b.why << "\n     " << b.failed << " runs failed, e.g. "
              << b.example << "\n";
  for (const auto& b : summary.fixed_bugs)
    std::cout << "FIXED? " << b << " passed on some runs: remove its known_bug mark if it passes everywhere\n";
  long runs = 0, passed = 0, known = 0;
  for (const auto& [k, r] : summary.rows) {
    runs += r.runs;
    passed += r.passed;
    known += r.known;
  }
  const bool ok = passed + known == runs;
  std::cout << (ok ? "PASSED" : "FAILED") << ": " << passed << " of " << runs << " runs passed, "
            << runs - passed - known << " failed";
  if (known) std::cout << ", " << known << " known-bug failures";
  if (std::find(args.modes.begin(), args.modes.end(), "random") != args.modes.end())
    std::cout << " (random seed " << args.seed << ")";
  std::cout << "\n";
  if (runs == 0) {
    std::cout << "no run matched the filters\n";
    return 1;
  }
  return ok ? 0 : 1;
}
