// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Stage 3: the next scale of the linear image, a 2x2 box average. Odd extents round up: the last row or
// column is repeated (the clamped index), as in the reference tool. The four samples are added in the
// reference's order (row by row), then multiplied by 1/4. Pointwise: a team per row (Planes.hpp).

#include <kssim/impl/ssimulacra2/Planes.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace kssim::impl::s2 {

struct DownscaleFunctor {
  const float* in;  // planes of ih x iw
  float* out;       // planes of oh x ow
  int ih, iw, oh, ow;
  struct Row {
    const float *top, *bottom;  // input rows 2y and min(2y + 1, ih - 1)
    float* out;
    int iw;
    KOKKOS_FORCEINLINE_FUNCTION void operator()(int x) const {
      const int x0 = 2 * x, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
      float sum = 0.0f;
      sum += top[x0];
      sum += top[x1];
      sum += bottom[x0];
      sum += bottom[x1];
      out[x] = sum * 0.25f;
    }
    KOKKOS_INLINE_FUNCTION void run(int n) const {
      KSSIM_VECTORIZE
      for (int x = 0; x < n; ++x) (*this)(x);
    }
  };
  KOKKOS_INLINE_FUNCTION Row row(int row) const {
    const int p = row / oh, y = row % oh, y0 = 2 * y, y1 = y0 + 1 < ih ? y0 + 1 : ih - 1;
    const float* plane = in + std::int64_t(p) * ih * iw;
    return {plane + std::int64_t(y0) * iw, plane + std::int64_t(y1) * iw, out + std::int64_t(row) * ow, iw};
  }
};

template <class ExecSpace>
void downscale(const ExecSpace& exec, const float* in, int planes, PlaneShape from, PlaneShape to, float* out) {
  for_each_row(exec, "kssim::ssimulacra2::downscale", planes * to.h, to.w, DownscaleFunctor{in, out, from.h, from.w, to.h, to.w});
}

}  // namespace kssim::impl::s2
