// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim_perf_tests: Google Benchmark driver inside one Kokkos session.
//
//   kssim_perf_tests --benchmark_out=results.json --benchmark_out_format=json
//   kssim_perf_tests --benchmark_filter='ssim2d/fwd\+bwd/float/.*/1x3x1080x1920'
//   KSSIM_BENCH_ALL=1 kssim_perf_tests        # host backends: also the shapes over 2^23 voxels
//   kssim_perf_tests --benchmark_filter='^stages/'   # each stage kernel alone (PerfStages.cpp)
//   kssim_perf_tests --benchmark_filter='^(msssim|masked)/'   # MS-SSIM, masked SSIM (PerfMetrics.cpp)
//
// Kokkos options (--kokkos-num-threads=N, --kokkos-device-id=N, ...) are consumed before Google
// Benchmark parses the rest. The JSON context records the Kokkos version, the execution spaces, their
// concurrency and the git revision the binary was built from (KssimGitHash.hpp: generated at every build,
// GitHash.cmake).
#include "KssimGitHash.hpp"
#include "PerfSSIM.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif


namespace {

std::string kokkos_version() {
  const int v = KOKKOS_VERSION;  // e.g. 40601 or 50202
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

void add_context() {
  benchmark::AddCustomContext("kokkos_version", kokkos_version());
  benchmark::AddCustomContext("kokkos_execution_space", Kokkos::DefaultExecutionSpace::name());
  benchmark::AddCustomContext("kokkos_concurrency", std::to_string(Kokkos::DefaultExecutionSpace().concurrency()));
  benchmark::AddCustomContext("kokkos_host_execution_space", Kokkos::DefaultHostExecutionSpace::name());
  benchmark::AddCustomContext("kokkos_host_concurrency",
                              std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()));
  benchmark::AddCustomContext("kssim_git", KSSIM_GIT_HASH);
  benchmark::AddCustomContext("kssim_bench_all", kssim_perf::run_all_shapes() ? "1" : "0");
#if defined(KOKKOS_ENABLE_CUDA)
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, Kokkos::Cuda().cuda_device()) == cudaSuccess) {
    benchmark::AddCustomContext("device_name", prop.name);
    benchmark::AddCustomContext("device_compute_capability",
                                std::to_string(prop.major) + "." + std::to_string(prop.minor));
    benchmark::AddCustomContext("device_multiprocessors", std::to_string(prop.multiProcessorCount));
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);  // removes the --kokkos-* arguments it recognises
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_context();
  kssim_perf::register_ssim2d_benchmarks();
  kssim_perf::register_ssim3d_benchmarks();
  kssim_perf::register_stage_benchmarks();
  kssim_perf::register_metric_benchmarks();
  kssim_perf::register_l1_ssim_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
