// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim::mpi timing without files (for machines where the kssim tool's image libraries are missing, such
// as the GPU device): every rank fills its block of a D x H x W float field (deterministic values), then
// times `repeat` calls of kssim::mpi::ssim_grad (mean and both gradients) after one warm-up, and rank 0
// prints one JSON line: the slowest rank's median and minimum, and the median time inside the halo
// exchanges (ExchangeClock). Ranks pick GPUs as Kokkos does (by local rank).
//
//   mpirun -np P kssim_mpi_bench D H W GRID_D GRID_H GRID_W [valid|same] [repeat]

#include <kssim/mpi/Distributed.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 7) {
    if (rank == 0) std::fprintf(stderr, "usage: kssim_mpi_bench D H W GRID_D GRID_H GRID_W [valid|same] [repeat]\n");
    MPI_Finalize();
    return 2;
  }
  const int global[3] = {std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3])};
  int grid[3] = {std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6])}, periods[3] = {0, 0, 0};
  const bool same = argc > 7 && std::string(argv[7]) == "same";
  const int repeat = argc > 8 ? std::atoi(argv[8]) : 5;
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, grid, periods, 0, &cart);
    int coords[3];
    MPI_Cart_coords(cart, rank, 3, coords);
    std::array<int, 3> lo{}, extent{};
    for (int a = 0; a < 3; ++a) {  // as even as possible, as `kssim compare --decompose` splits
      const int base = global[a] / grid[a], extra = global[a] % grid[a], k = coords[a];
      lo[a] = k * base + std::min(k, extra);
      extent[a] = base + (k < extra ? 1 : 0);
    }
    using View = Kokkos::View<float*****, Kokkos::LayoutRight>;
    View x("x", 1, 1, extent[0], extent[1], extent[2]), y("y", 1, 1, extent[0], extent[1], extent[2]);
    View g1("g1", 1, 1, extent[0], extent[1], extent[2]), g2("g2", 1, 1, extent[0], extent[1], extent[2]);
    float* px = x.data();
    float* py = y.data();
    const int h = extent[1], w = extent[2], gh = global[1], gw = global[2];
    const int o0 = lo[0], o1 = lo[1], o2 = lo[2];  // plain ints: a device lambda may not call std::array's members
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<>(0, int(x.size())), KOKKOS_LAMBDA(int i) {
          const long long d = i / (h * w) + o0, r = i / w % h + o1, c = i % w + o2;
          const unsigned long long k = ((unsigned long long)(d * gh + r) * gw + c) * 2654435761ull;
          px[i] = float((k >> 8) % 1000) / 1000.0f;
          py[i] = 0.9f * px[i] + 0.1f * float((k >> 20) % 1000) / 1000.0f;
        });
    Kokkos::fence();
    kssim::Options opts;
    opts.padding = same ? kssim::Padding::Same : kssim::Padding::Valid;
    auto& clock = kssim::impl::mpi::ExchangeClock::get();
    clock.enabled = true;
    Kokkos::DefaultExecutionSpace exec;
    std::vector<double> total, exchange;
    double mean = 0;
    try {
      for (int run = 0; run <= repeat; ++run) {
        MPI_Barrier(cart);
        clock.seconds = 0;
        const auto start = std::chrono::steady_clock::now();
        mean = kssim::mpi::ssim_grad(exec, cart, lo, x, y, g1, g2, opts);
        double local[2] = {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                           clock.seconds};
        double slowest[2];
        MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, cart);
        if (run > 0) {
          total.push_back(slowest[0]);
          exchange.push_back(slowest[1]);
        }
      }
    } catch (const std::exception& e) {
      if (rank == 0) std::fprintf(stderr, "kssim_mpi_bench: %s\n", e.what());
      status = 2;
    }
    if (status == 0 && rank == 0) {
      std::sort(total.begin(), total.end());
      std::sort(exchange.begin(), exchange.end());
      std::printf("{\"field\": [%d, %d, %d], \"grid\": [%d, %d, %d], \"padding\": \"%s\", \"backend\": \"%s\", "
                  "\"ssim\": %.17g, \"repeat\": %d, \"median_s\": %.6g, \"min_s\": %.6g, \"exchange_median_s\": %.6g}\n",
                  global[0], global[1], global[2], grid[0], grid[1], grid[2], same ? "same" : "valid",
                  Kokkos::DefaultExecutionSpace::name(), mean, repeat, total[total.size() / 2], total.front(),
                  exchange[exchange.size() / 2]);
    }
    MPI_Comm_free(&cart);
  }
  MPI_Finalize();
  return status;
}
