// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the command line of `kssim` (CLI11 parsing of src/cli/main.cpp and the option checks of
// src/cli/Compare.cpp). The input is the argument list, arguments separated by NUL bytes; it runs the real
// main(), built from src/cli/main.cpp with -Dmain=kssim_cli_main.
//
// Sandbox: the fuzzer works in an empty temporary directory and skips inputs with an argument containing
// '/', so no input file can ever be read (nothing to read) and no output file is ever written (outputs are
// written only after both inputs loaded). compute() is a stub that aborts (ComputeStub.cpp): reaching it,
// or finding a file in the directory after a run, is reported as a crash, i.e. a hole in the sandbox.
// Because it changes directory at start-up, give kssim_reliability_fuzz_cli absolute paths (corpus folders,
// -artifact_prefix, inputs to reproduce), as run-fuzzers does.
// src/cli does not expose its parser as a function yet; see README.md.
#include "FuzzCommon.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

int kssim_cli_main(int argc, char** argv);

namespace {
std::filesystem::path sandbox;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir[] = "/tmp/kssim-fuzz-cli-XXXXXX";
  if (!mkdtemp(dir) || chdir(dir) != 0) {
    std::perror("kssim fuzz: sandbox directory");
    std::abort();
  }
  sandbox = dir;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(sandbox, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"kssim"};
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      if (data[i] == '/') return 0;  // stay inside the sandbox
      cur.push_back(char(data[i]));
    }
  }
  if (!cur.empty() || size == 0) args.push_back(cur);
  if (args.size() > 64) return 0;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = kssim_cli_main(int(args.size()), argv.data());
  // 0: help or version; 2: a usage error, reported on one line. 3 ("internal error", an unexpected exception
  // type) would be a bug of the tool, and 1 (an SSIM below --threshold) needs a computation, never reached here.
  KSSIM_FUZZ_CHECK(status == 0 || status == 2);
  KSSIM_FUZZ_CHECK(std::filesystem::is_empty(sandbox));
  return 0;
}
