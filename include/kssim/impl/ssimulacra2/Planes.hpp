// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Internal image storage of SSIMULACRA2: planes of h x w floats, row-major and packed, plane p = n * 3 + c
// for image n and channel c.
//
// Rule for every functor and lambda of the SSIMULACRA2 kernels: they hold only raw pointers, integer
// extents and strides, and plain structs of those, and are dispatched through impl::launch (Launch.hpp:
// test builds check that every team ran). Never a Kokkos::View (member or capture): with Kokkos'
// mdspan-based View, nvcc can lay a View out differently in device code than the host compiler does, and a
// kernel that captured one silently did nothing. Views are turned into pointers before dispatch.

#include <kssim/Options.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Vectorize.hpp>
#include <kssim/impl/ssimulacra2/Constants.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl::s2 {

struct PlaneShape {
  int h = 0, w = 0;
  KOKKOS_INLINE_FUNCTION std::size_t size() const { return std::size_t(h) * std::size_t(w); }
};

// The extents of scale s of an h x w image: each scale halves the previous one, rounding up.
inline PlaneShape scale_shape(int h, int w, int s) {
  for (int i = 0; i < s; ++i) {
    h = (h + 1) / 2;
    w = (w + 1) / 2;
  }
  return {h, w};
}

// The number of scales of an h x w image (h, w >= min_extent), as the reference tool decides it: before
// each scale it stops if the previous scale (the input, for the first) is smaller than 8 x 8. So scale s >= 1
// exists while scale s - 1 has 8 x 8 pixels: all six from 113 x 113 (scale 4 is ceil(113 / 16) = 8), two
// at 8 x 8 (the second 4 x 4). Fewer scales also change which weight each feature gets (Features.hpp).
inline int scale_count(int h, int w) {
  int count = 0;
  while (count < num_scales) {
    const PlaneShape before = scale_shape(h, w, count > 0 ? count - 1 : 0);
    if (before.h < 8 || before.w < 8) break;
    ++count;
  }
  return count;
}

// Elements of one plane summed over the six scales (offsets of a per-scale pyramid).
inline std::size_t pyramid_offset(int h, int w, int s) {
  std::size_t off = 0;
  for (int i = 0; i < s; ++i) off += scale_shape(h, w, i).size();
  return off;
}

// Host lambdas of lane loops are always inlined: GCC left the error-map pass's lane body out of line (a
// call per lane), which kept the loop scalar. Empty for GPU compilers.
#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
#define KSSIM_S2_INLINE_LAMBDA __attribute__((always_inline))
#else
#define KSSIM_S2_INLINE_LAMBDA
#endif

// Runs f(jj) for jj in [0, count) within a team: vector lanes on GPUs, a vectorised loop on hosts (one
// team thread there, so no nested dispatch is needed; `omp simd` vectorises across the lines).
template <class Team, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_lines(const Team& team, int count, const F& f) {
  if constexpr (is_gpu_space_v<typename Team::execution_space>) {
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count), f);
  } else {
    KSSIM_VECTORIZE
    for (int jj = 0; jj < count; ++jj) f(jj);
  }
}

// Pointwise stages: a team per row (of `rows`), the row's `cols` elements across its lanes. f.row(r)
// returns the row's element functor (row pointers resolved once), called for x in [0, cols) on GPUs; on
// hosts its run(cols) loops over the row itself. (A flat range
// with index divisions per element did not vectorise on hosts: 27% of the time at 1080p.)
template <class F>
struct RowKernel {
  F f;
  int cols;
  template <class Team>
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const auto row = f.row(team.league_rank());
    if constexpr (is_gpu_space_v<typename Team::execution_space>)
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, cols), [&](int x) { row(x); });
    else
      row.run(cols);  // its own vectorised loop over restrict-qualified local pointers
  }
};

template <class ExecSpace, class F>
void for_each_row(const ExecSpace& exec, const char* label, int rows, int cols, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  constexpr bool gpu = is_gpu_space_v<ExecSpace>;
  const RowKernel<F> k{f, cols};
  auto policy = make_team_policy(exec, rows, gpu ? 8 : 1, gpu ? 32 : 1, 0, 0, Options{}, k, Kokkos::ParallelForTag{});
  launch(label, policy, k);
}

}  // namespace kssim::impl::s2
