#pragma once
// Stage 3: the next scale of the linear image, a 2x2 box average. Odd extents round up: the last row or
// column is repeated (the clamped index), as in the reference tool. The four samples are added in the
// reference's order (row by row), then multiplied by 1/4. Pointwise: a RangePolicy over output pixels.

#include <kssim/impl/ssimulacra2/Planes.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace kssim::impl::s2 {

struct DownscaleFunctor {
  const float* in;  // planes of ih x iw
  float* out;       // planes of oh x ow
  int ih, iw, oh, ow;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t ohw = std::int64_t(oh) * ow;
    const std::int64_t p = i / ohw, r = i % ohw;
    const int y = int(r / ow), x = int(r % ow);
    const int y0 = 2 * y, x0 = 2 * x;
    const int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
    const float* src = in + p * std::int64_t(ih) * iw;
    float sum = 0.0f;
    sum += src[std::int64_t(y0) * iw + x0];
    sum += src[std::int64_t(y0) * iw + x1];
    sum += src[std::int64_t(y1) * iw + x0];
    sum += src[std::int64_t(y1) * iw + x1];
    out[i] = sum * 0.25f;
  }
};

template <class ExecSpace>
void downscale(const ExecSpace& exec, const float* in, int planes, PlaneShape from, PlaneShape to, float* out) {
  Kokkos::parallel_for("kssim::ssimulacra2::downscale",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                           exec, 0, std::int64_t(planes) * std::int64_t(to.size())),
                       DownscaleFunctor{in, out, from.h, from.w, to.h, to.w});
}

}  // namespace kssim::impl::s2
