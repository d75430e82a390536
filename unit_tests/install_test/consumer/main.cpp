// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Consumer of an installed kssim: SSIM of two small images with known values.
#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  int failures = 0;
  {
    using Exec = Kokkos::DefaultExecutionSpace;
    using Image = Kokkos::View<double****, Exec::memory_space>;
    const Exec exec;
    Image a("a", 1, 1, 16, 16), b("b", 1, 1, 16, 16), c("c", 1, 1, 16, 16);
    Kokkos::parallel_for(
        "consumer::fill", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(exec, {0, 0}, {16, 16}),
        KOKKOS_LAMBDA(int i, int j) {
          a(0, 0, i, j) = 0.3;
          b(0, 0, i, j) = 0.4;
          c(0, 0, i, j) = 0.5 + 0.25 * ((i * 7 + j * 3) % 5 - 2) / 2.0;
        });

    // Constant images 0.3 and 0.4: the variances and the covariance vanish, so the structure term is
    // C2 / C2 = 1 and every map pixel is the luminance term (2*0.3*0.4 + C1) / (0.3^2 + 0.4^2 + C1),
    // with C1 = (0.01 * 1)^2, whatever the window.
    const double c1 = 0.01 * 0.01;
    const double expected = (2 * 0.3 * 0.4 + c1) / (0.3 * 0.3 + 0.4 * 0.4 + c1);
    const double s = kssim::ssim(exec, a, b);
    // Identical images: SSIM is exactly 1.
    const double same = kssim::ssim(exec, c, c);

    std::printf("kssim consumer: ssim(0.3, 0.4) = %.12f (expected %.12f), ssim(c, c) = %.12f\n", s, expected,
                same);
    if (!(std::fabs(s - expected) < 1e-9)) {
      std::printf("FAIL: ssim of the constant images\n");
      ++failures;
    }
    if (!(std::fabs(same - 1.0) < 1e-9)) {
      std::printf("FAIL: ssim of identical images\n");
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
