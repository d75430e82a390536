#pragma once
// MS-SSIM's downsampling between scales and its adjoint: a 2x2 (volumes 2x2x2) average with stride 2, and
// zero padding of one sample before the start of every odd spatial extent, as PyTorch's
// avg_pool2d(x, 2, padding=extent % 2) does (pytorch-msssim): an extent n becomes (n + n % 2) / 2, output i
// averages inputs 2i - p and 2i - p + 1 (p = n % 2), and the divisor is always 4 (8), padding included.
// The windows do not overlap, so the adjoint is a gather: every input sample receives 1/4 (1/8) of the
// gradient of the one output whose window holds it. One thread per output (input for the adjoint): no two
// threads write the same element, no atomics.

#include <kssim/impl/Geometry.hpp>
#include <kssim/impl/KernelArrays.hpp>
#include <kssim/impl/Launch.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// The extents after one pooling: spatial axes halved rounding up; 2D images (D = 1) keep D.
inline std::array<int, 5> pooled_extents(const std::array<int, 5>& e, bool volumetric) {
  return {e[0], e[1], volumetric ? (e[2] + 1) / 2 : e[2], (e[3] + 1) / 2, (e[4] + 1) / 2};
}

// The zero padding before each spatial axis of an input of extents e: 1 where the extent is odd.
struct PoolPadding {
  int d = 0, h = 0, w = 0;
  bool volumetric = false;
  static PoolPadding of(const std::array<int, 5>& e, bool volumetric) {
    return {volumetric ? e[2] % 2 : 0, e[3] % 2, e[4] % 2, volumetric};
  }
  KOKKOS_INLINE_FUNCTION double divisor() const { return volumetric ? 8.0 : 4.0; }
};

template <class Array>
int element_count(const Array& a) {
  return a.extent(0) * a.extent(1) * a.extent(2) * a.extent(3) * a.extent(4);
}

// Flat index -> (n, c, d, h, w) over the extents of a rank-5 array.
template <class Array>
KOKKOS_INLINE_FUNCTION void unflatten(const Array& a, int e, int (&i)[5]) {
  for (int k = 4; k >= 0; --k) {
    i[k] = e % a.extent(k);
    e /= a.extent(k);
  }
}

// Only pointers, extents and PODs (KernelArrays.hpp). x_out, y_out: the pooled extents.
template <class T>
struct AveragePool {
  InputArray<T> x_in, y_in;
  OutputArray<T> x_out, y_out;
  PoolPadding pad;

  KOKKOS_FUNCTION void operator()(int e) const {
    int o[5];
    unflatten(x_out, e, o);
    T sx = 0, sy = 0;
    const int depth_taps = pad.volumetric ? 2 : 1;
    for (int a = 0; a < depth_taps; ++a)
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 2; ++c) {
          const int d = pad.volumetric ? 2 * o[2] - pad.d + a : o[2], h = 2 * o[3] - pad.h + b,
                    w = 2 * o[4] - pad.w + c;
          if (d < 0 || h < 0 || w < 0 || h >= x_in.extent(3) || w >= x_in.extent(4) || d >= x_in.extent(2)) continue;
          sx += x_in(o[0], o[1], d, h, w);
          sy += y_in(o[0], o[1], d, h, w);
        }
    const T inv = T(1.0 / pad.divisor());
    x_out(o[0], o[1], o[2], o[3], o[4]) = sx * inv;
    y_out(o[0], o[1], o[2], o[3], o[4]) = sy * inv;
  }
};

// Both images pooled in one pass; the outputs are the pooled extents of the inputs.
template <class ExecSpace, class T>
void average_pool(const ExecSpace& exec, const AveragePool<T>& k) {
  const int count = element_count(k.x_out);
  launch("kssim::average_pool", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), k);
}

// Only pointers, extents and PODs. grad*_in are the pooled (coarse) gradients, grad*_out the fine ones,
// either pair may be absent (null data).
template <class T>
struct AveragePoolAdjoint {
  InputArray<T> grad1_in, grad2_in;
  OutputArray<T> grad1_out, grad2_out;
  PoolPadding pad;
  bool accumulate = false;

  KOKKOS_FUNCTION void operator()(int e) const {
    const OutputArray<T>& shape = grad1_out.data() ? grad1_out : grad2_out;
    int i[5];
    unflatten(shape, e, i);
    const int d = pad.volumetric ? (i[2] + pad.d) / 2 : i[2], h = (i[3] + pad.h) / 2, w = (i[4] + pad.w) / 2;
    const T inv = T(1.0 / pad.divisor());
    if (grad1_out.data()) add(grad1_out(i[0], i[1], i[2], i[3], i[4]), inv * grad1_in(i[0], i[1], d, h, w));
    if (grad2_out.data()) add(grad2_out(i[0], i[1], i[2], i[3], i[4]), inv * grad2_in(i[0], i[1], d, h, w));
  }
  KOKKOS_INLINE_FUNCTION void add(T& dst, T v) const { dst = accumulate ? dst + v : v; }
};

template <class ExecSpace, class T>
void average_pool_adjoint(const ExecSpace& exec, const AveragePoolAdjoint<T>& k) {
  const int count = element_count(k.grad1_out.data() ? k.grad1_out : k.grad2_out);
  launch("kssim::average_pool_adjoint", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), k);
}

}  // namespace kssim::impl
