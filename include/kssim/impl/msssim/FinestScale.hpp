// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// MS-SSIM of 16-bit images: its scales run in the compute type T (every scale after the first is a pooled
// float workspace anyway), so the finest scale's images are converted to T once per forward, and gradients of
// a 16-bit type are computed into T and rounded once, after the upstream factor and any accumulation
// (kssim/SSIM.hpp's rule). The price is one pass over the images and one over the gradients: a scale-0 plan
// reading the 16-bit pixels itself would compile every SSIM kernel a second time (its contrast-structure term)
// for each 16-bit type and output type.

#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/msssim/AveragePool.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// out = in, or out += in (accumulate), element by element, computed in T and stored as Out, for up to two pairs
// of arrays of the same extents (a pair with null output data is skipped). Only pointers, extents and PODs.
template <class ExecSpace, class T, class In, class Out>
struct ConvertArrays {
  InputArray<In> in1, in2;
  OutputArray<Out> out1, out2;
  bool accumulate = false;

  KOKKOS_INLINE_FUNCTION const OutputArray<Out>& shape() const { return out1.data() ? out1 : out2; }

  KOKKOS_FUNCTION void operator()(int e) const {
    const PoolRuns<ExecSpace> run(shape(), e);  // a run of one row: its index arithmetic once
    if (out1.data()) convert_run(in1, out1, run);
    if (out2.data()) convert_run(in2, out2, run);
  }

  KOKKOS_INLINE_FUNCTION void convert_run(const InputArray<In>& in, const OutputArray<Out>& out,
                                          const PoolRuns<ExecSpace>& run) const {
    const int(&i)[4] = run.i;
    const In* from = &in(i[0], i[1], i[2], i[3], 0);
    Out* to = &out(i[0], i[1], i[2], i[3], 0);
    const std::ptrdiff_t fs = in.stride(4), ts = out.stride(4);
    for (int w = run.w0; w < run.w1; ++w) {
      T v = to_compute<T>(from[w * fs]);
      if (accumulate) v += to_compute<T>(to[w * ts]);
      to[w * ts] = to_storage<Out>(v);
    }
  }
};

template <class ExecSpace, class T, class In, class Out>
void convert_arrays(const ExecSpace& exec, const ConvertArrays<ExecSpace, T, In, Out>& k) {
  if (!k.out1.data() && !k.out2.data()) return;
  launch("kssim::ms_ssim_convert", Kokkos::RangePolicy<ExecSpace>(exec, 0, PoolRuns<ExecSpace>::count(k.shape())), k);
}

}  // namespace kssim::impl
