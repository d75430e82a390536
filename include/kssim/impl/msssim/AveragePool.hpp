// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// MS-SSIM's downsampling between scales and its adjoint: a 2x2 (volumes 2x2x2) average with stride 2, and
// zero padding of one sample before the start of every odd spatial extent, as PyTorch's
// avg_pool2d(x, 2, padding=extent % 2) does (pytorch-msssim): an extent n becomes (n + n % 2) / 2, output i
// averages inputs 2i - p and 2i - p + 1 (p = n % 2), and the divisor is always 4 (8), padding included.
// The windows do not overlap, so the adjoint is a gather: every input sample receives 1/4 (1/8) of the
// gradient of the one output whose window holds it. Each output (input, for the adjoint) is written by one
// thread: no two threads write the same element, no atomics.

#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tiles.hpp>

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

// Rows of a rank-5 array: its (n, c, d, h) index tuples.
template <class Array>
int row_count(const Array& a) {
  return a.extent(0) * a.extent(1) * a.extent(2) * a.extent(3);
}

// Row r of a rank-5 array's extents -> (n, c, d, h).
template <class Array>
KOKKOS_INLINE_FUNCTION void row_index(const Array& a, int r, int (&i)[4]) {
  i[3] = r % a.extent(3);
  r /= a.extent(3);
  i[2] = r % a.extent(2);
  r /= a.extent(2);
  i[1] = r % a.extent(1);
  i[0] = r / a.extent(1);
}

// Each work item is a run of `Chunk` consecutive outputs of one row: the row's index arithmetic (divisions,
// a long instruction sequence) once per run. Hosts: runs of 64;
// GPUs: one output per thread, consecutive threads on consecutive outputs.
template <class ExecSpace>
inline constexpr int pool_chunk = gpu_code_paths_v<ExecSpace> ? 1 : 64;

// The work items of both passes over the rows of an array of extents `a` (the pooled outputs, or for the
// adjoint the fine gradients): item e is row (n, c, d, h) = i of the array, elements w0 .. w1 - 1.
template <class ExecSpace>
struct PoolRuns {
  static constexpr int chunk = pool_chunk<ExecSpace>;
  int i[4];
  int w0, w1;

  template <class Array>
  KOKKOS_INLINE_FUNCTION static int per_row(const Array& a) { return (a.extent(4) + chunk - 1) / chunk; }
  template <class Array>
  static int count(const Array& a) { return row_count(a) * per_row(a); }
  template <class Array>
  KOKKOS_INLINE_FUNCTION PoolRuns(const Array& a, int e) {
    row_index(a, e / per_row(a), i);
    w0 = e % per_row(a) * chunk;
    w1 = Kokkos::min(w0 + chunk, a.extent(4));
  }
};

// Only pointers, extents and PODs (KernelArrays.hpp). x_out, y_out: the pooled extents.
template <class ExecSpace, class T>
struct AveragePool {
  InputArray<T> x_in, y_in;
  OutputArray<T> x_out, y_out;
  PoolPadding pad;

  KOKKOS_FUNCTION void operator()(int e) const {
    const PoolRuns<ExecSpace> run(x_out, e);
    const int(&o)[4] = run.i;
    const int w0 = run.w0, w1 = run.w1;
    // The input rows of this output row (two along H, and for volumes two along D), less those in the padding.
    const T* xr[4];
    const T* yr[4];
    int rows = 0;
    for (int a = 0; a < (pad.volumetric ? 2 : 1); ++a)
      for (int b = 0; b < 2; ++b) {
        const int d = pad.volumetric ? 2 * o[2] - pad.d + a : o[2], h = 2 * o[3] - pad.h + b;
        if (d < 0 || h < 0 || d >= x_in.extent(2) || h >= x_in.extent(3)) continue;
        xr[rows] = &x_in(o[0], o[1], d, h, 0);
        yr[rows++] = &y_in(o[0], o[1], d, h, 0);
      }
    const std::ptrdiff_t xs = x_in.stride(4), ys = y_in.stride(4);
    const int width = x_in.extent(4);
    T* const xo = &x_out(o[0], o[1], o[2], o[3], 0);
    T* const yo = &y_out(o[0], o[1], o[2], o[3], 0);
    const std::ptrdiff_t xos = x_out.stride(4), yos = y_out.stride(4);
    const T inv = T(1.0 / pad.divisor());
    // Outputs whose two columns c0 = 2w - pad, c0 + 1 both lie inside the row: [interior0, interior1).
    const int interior0 = Kokkos::max(w0, pad.w), interior1 = Kokkos::min(w1, (width + pad.w) / 2);
    for (int w = w0; w < w1; ++w) {
      if (w == interior0 && w < interior1) {  // the loop the compiler vectorises, without bounds tests
        if (rows == 2 && xs == 1 && ys == 1) {
          for (int v = interior0; v < interior1; ++v) {
            const int c0 = 2 * v - pad.w;
            xo[v * xos] = ((xr[0][c0] + xr[0][c0 + 1]) + (xr[1][c0] + xr[1][c0 + 1])) * inv;
            yo[v * yos] = ((yr[0][c0] + yr[0][c0 + 1]) + (yr[1][c0] + yr[1][c0 + 1])) * inv;
          }
          w = interior1 - 1;
          continue;
        }
      }
      const int c0 = 2 * w - pad.w, c1 = c0 + 1;  // c0 is -1 in the padding, c1 may pass the end
      T sx = 0, sy = 0;
      for (int k = 0; k < rows; ++k) {
        sx += (c0 >= 0 ? xr[k][c0 * xs] : T(0)) + (c1 < width ? xr[k][c1 * xs] : T(0));
        sy += (c0 >= 0 ? yr[k][c0 * ys] : T(0)) + (c1 < width ? yr[k][c1 * ys] : T(0));
      }
      xo[w * xos] = sx * inv;
      yo[w * yos] = sy * inv;
    }
  }
};

// Both images pooled in one pass; the outputs are the pooled extents of the inputs.
template <class ExecSpace, class T>
void average_pool(const ExecSpace& exec, const AveragePool<ExecSpace, T>& k) {
  launch("kssim::average_pool", Kokkos::RangePolicy<ExecSpace>(exec, 0, PoolRuns<ExecSpace>::count(k.x_out)), k);
}

// Only pointers, extents and PODs. grad*_in are the pooled (coarse) gradients, grad*_out the fine ones,
// either pair may be absent (null data).
template <class ExecSpace, class T>
struct AveragePoolAdjoint {
  InputArray<T> grad1_in, grad2_in;
  OutputArray<T> grad1_out, grad2_out;
  PoolPadding pad;
  bool accumulate = false;

  KOKKOS_INLINE_FUNCTION const OutputArray<T>& shape() const { return grad1_out.data() ? grad1_out : grad2_out; }

  KOKKOS_FUNCTION void operator()(int e) const {
    const PoolRuns<ExecSpace> run(shape(), e);
    const int(&i)[4] = run.i;
    const int w0 = run.w0, w1 = run.w1;
    const int d = pad.volumetric ? (i[2] + pad.d) / 2 : i[2], h = (i[3] + pad.h) / 2;  // the coarse row
    const T inv = T(1.0 / pad.divisor());
    if (grad1_out.data())
      gather(&grad1_out(i[0], i[1], i[2], i[3], 0), grad1_out.stride(4), &grad1_in(i[0], i[1], d, h, 0),
             grad1_in.stride(4), w0, w1, inv);
    if (grad2_out.data())
      gather(&grad2_out(i[0], i[1], i[2], i[3], 0), grad2_out.stride(4), &grad2_in(i[0], i[1], d, h, 0),
             grad2_in.stride(4), w0, w1, inv);
  }

  // Fine row samples w0 .. w1 - 1 from the coarse row: out[w] (+)= inv * in[(w + pad) / 2].
  KOKKOS_INLINE_FUNCTION void gather(T* out, std::ptrdiff_t out_stride, const T* in, std::ptrdiff_t in_stride, int w0,
                                     int w1, T inv) const {
    if (accumulate) {
      for (int w = w0; w < w1; ++w) out[w * out_stride] += inv * in[(w + pad.w) / 2 * in_stride];
    } else {
      for (int w = w0; w < w1; ++w) out[w * out_stride] = inv * in[(w + pad.w) / 2 * in_stride];
    }
  }
};

template <class ExecSpace, class T>
void average_pool_adjoint(const ExecSpace& exec, const AveragePoolAdjoint<ExecSpace, T>& k) {
  launch("kssim::average_pool_adjoint",
         Kokkos::RangePolicy<ExecSpace>(exec, 0, PoolRuns<ExecSpace>::count(k.shape())), k);
}

}  // namespace kssim::impl
