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
  KOKKOS_INLINE_FUNCTION void operator()(int row, int x) const {
    const int p = row / oh, y = row % oh;
    const int y0 = 2 * y, x0 = 2 * x;
    const int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
    const float* src = in + p * std::int64_t(ih) * iw;
    float sum = 0.0f;
    sum += src[std::int64_t(y0) * iw + x0];
    sum += src[std::int64_t(y0) * iw + x1];
    sum += src[std::int64_t(y1) * iw + x0];
    sum += src[std::int64_t(y1) * iw + x1];
    out[(std::int64_t(p) * oh + y) * ow + x] = sum * 0.25f;
  }
};

template <class ExecSpace>
void downscale(const ExecSpace& exec, const float* in, int planes, PlaneShape from, PlaneShape to, float* out) {
  for_each_row(exec, "kssim::ssimulacra2::downscale", planes * to.h, to.w, DownscaleFunctor{in, out, from.h, from.w, to.h, to.w});
}

}  // namespace kssim::impl::s2
