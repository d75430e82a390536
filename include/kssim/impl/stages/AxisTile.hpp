// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the column, depth and adjoint passes share: a correlation along a strided axis,
//   out[o, l, i] = sum_t weight[t] * in[o, l + t - offset, i],   in = fill outside [0, len_in)
// (forward passes under Reflect or Replicate padding: the row of the input that the position reads),
// on planes stored as flat (outer, len, inner) arrays, staged tile by tile in team scratch.
// The column pass (2D, and H in 3D) and the depth pass (D in 3D) differ only in these numbers, and an
// adjoint pass is the same correlation with the reversed window and offset window - 1 - offset.

#include <kssim/impl/core/FixedTaps.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Tuning.hpp>
#include <kssim/impl/core/Vectorize.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

struct AxisPass {
  int outer = 1;            // independent (outer) blocks
  int len_in = 1;           // axis length of the input planes
  int len_out = 1;          // axis length of the output planes
  int inner = 1;            // contiguous elements per axis step (the axis stride)
  int offset = 0;           // see above
  int outer_per_image = 1;  // outer blocks per (n, c) slice
  int tile_len = 1;         // outputs along the axis per tile (axis_tile_len below)
  int len_tiles = 1, inner_tiles = 1;
  // Elements from one axis step to the next in the input and output planes: `inner`, or more where the
  // planes' rows are padded (the row-pass planes, Geometry::row_pitch). set_steps, else set_tiles sets them.
  int in_step = 0, out_step = 0;
  // What positions outside [0, len_in) read: `fill` (Valid, Same, every adjoint pass: the partial
  // derivatives vanish outside the map), else the row Geometry::source maps them to.
  Padding padding = Padding::Same;

  // The input row that axis position l reads, or -1 for the fill.
  KOKKOS_INLINE_FUNCTION int source(int l) const { return padded_source(l, len_in, padding); }

  KOKKOS_INLINE_FUNCTION std::size_t in_index(int o, int l, int i) const {
    return (std::size_t(o) * len_in + l) * in_step + i;
  }
  KOKKOS_INLINE_FUNCTION std::size_t out_index(int o, int l, int i) const {
    return (std::size_t(o) * len_out + l) * out_step + i;
  }
  int league_size() const { return outer * len_tiles * inner_tiles; }
  int tiles_per_outer() const { return len_tiles * inner_tiles; }

  // The adjoint pass of this one for a window of `window` taps.
  AxisPass adjoint(int window) const {
    AxisPass a = *this;
    a.len_in = len_out;
    a.len_out = len_in;
    a.offset = window - 1 - offset;
    a.in_step = out_step;
    a.out_step = in_step;
    a.padding = Padding::Same;
    return a;
  }
  void set_steps(int in, int out) {
    in_step = in;
    out_step = out;
  }
  void set_tiles(int len, int tile_inner) {
    tile_len = len;
    len_tiles = ceil_div(len_out, len);
    inner_tiles = ceil_div(inner, tile_inner);
    if (in_step == 0) in_step = inner;
    if (out_step == 0) out_step = inner;
  }
};

// Position of a team's tile.
struct AxisTilePosition {
  int outer, l0, i0;
};

KOKKOS_INLINE_FUNCTION AxisTilePosition axis_tile_position(const AxisPass& a, int league_rank, int tile_len,
                                                           int tile_inner) {
  const int per_outer = a.len_tiles * a.inner_tiles;
  const int rem = league_rank % per_outer;
  return {league_rank / per_outer, (rem / a.inner_tiles) * tile_len, (rem % a.inner_tiles) * tile_inner};
}

// Scratch tiles of the axis passes: (K, halo rows, TileInner), aligned for 128-bit access.
template <class ExecSpace, class T>
struct AxisScratch {
  using Scratch = Kokkos::View<T***, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int inner = Tiles<ExecSpace, T>::axis_inner;
  static constexpr std::size_t align = 4 * sizeof(T);
  static std::size_t bytes(int planes, int rows) { return std::size_t(planes) * rows * inner * sizeof(T) + align; }
  template <class Team>
  KOKKOS_INLINE_FUNCTION static Scratch allocate(const Team& team, int planes, int rows) {
    void* p = team.team_scratch(int(Tiles<ExecSpace, T>::scratch_level))
                  .get_shmem_aligned(std::size_t(planes) * rows * inner * sizeof(T), std::ptrdiff_t(align));
    return Scratch(static_cast<T*>(p), planes, rows, inner);
  }
};

// The tile length of an axis pass staging `planes` planes through a window of `window` taps:
// Tiles::axis_len, halved while the scratch tile with its halo would exceed the backend's team scratch
// (float GPU tiles of 64 outputs fit windows up to 15 taps in 40 KiB; wider windows get 32).
template <class ExecSpace, class T>
int axis_tile_len(const ExecSpace& exec, int planes, int window) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const std::size_t max = std::size_t(Policy(exec, 1, 1).scratch_size_max(Tiles<ExecSpace, T>::scratch_level));
  int len = Tiles<ExecSpace, T>::axis_len;
  while (len > Tiles<ExecSpace, T>::axis_rows && len % 2 == 0 &&
         AxisScratch<ExecSpace, T>::bytes(planes, len + window - 1) > max)
    len /= 2;
  return len;
}

// Stages planes 0..K-1 of `in` for the outputs l0 .. l0+tile_len-1 (plus the window's halo) into
// tile(k, j, i), i < TileInner; positions outside the input axis get fill[k].
// GPUs: one flat range over all threads and lanes of the team (consecutive lanes take consecutive
// elements: coalesced), each element loading all K planes at once (K loads in flight per lane), with
// little integer work per element (nested thread/lane ranges cost several times the loads themselves).
// Hosts: one plain contiguous copy per (plane, row), which the compiler vectorises.
template <int K, int TileInner, class Team, class Scratch, class In, class T>
KOKKOS_INLINE_FUNCTION void stage_axis_tile(const Team& team, const Scratch& tile, const In& in, const AxisPass& a,
                                            const AxisTilePosition& p, int halo_len, const T (&fill)[K]) {
  constexpr int tile_inner = TileInner;
  const int n_inner = p.i0 + tile_inner <= a.inner ? tile_inner : a.inner - p.i0;  // valid contiguous elements
  if constexpr (gpu_code_paths_v<typename Team::execution_space>) {
    // Offsets of the staged element (j, i) = (0, 0)'s row and column: row l of the input starts at
    // first + l * step (rows outside the input are not loaded, or, when padding extends the image, read
    // the row AxisPass::source maps them to).
    const std::ptrdiff_t plane = in.stride(0), step = a.in_step;
    const std::ptrdiff_t first = std::ptrdiff_t(p.outer) * a.len_in * step + p.i0;
    const T* src = in.data();
    T* dst = tile.data();
    const std::ptrdiff_t tile_plane = std::ptrdiff_t(halo_len) * tile_inner;
    if (TileInner % 4 == 0 && step % 4 == 0 && plane % 4 == 0 && first % 4 == 0 && quad_aligned(src) &&
        quad_aligned(dst)) {
      // Rows of whole quads (the row passes' planes, padded rows): four elements per lane with 128-bit
      // loads and stores, a quarter of the instructions of the element loop below.
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, halo_len * tile_inner / 4), [&](int e4) {
        const int e = 4 * e4, j = e / tile_inner, i = e % tile_inner;
        const int l = a.source(p.l0 - a.offset + j);
        const bool row_inside = l >= 0;
        T v[K][4];
        if (row_inside && i + 4 <= n_inner) {
          const T* q = src + (first + std::ptrdiff_t(l) * step + i);
          for (int k = 0; k < K; ++k) load_quads(q + k * plane, v[k]);
        } else {
          for (int k = 0; k < K; ++k)
            for (int u = 0; u < 4; ++u)
              v[k][u] = row_inside && i + u < n_inner ? src[first + std::ptrdiff_t(l) * step + i + u + k * plane] : fill[k];
        }
        for (int k = 0; k < K; ++k) store_quads(dst + k * tile_plane + e, v[k]);
      });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, halo_len * tile_inner), [&](int e) {
      const int j = e / tile_inner, i = e % tile_inner;  // compile-time divisor: a shift and a mask
      const int l = a.source(p.l0 - a.offset + j);
      T v[K];
      if (l >= 0 && i < n_inner) {
        const T* q = src + (first + std::ptrdiff_t(l) * step + i);
        for (int k = 0; k < K; ++k) v[k] = q[k * plane];
      } else {
        for (int k = 0; k < K; ++k) v[k] = fill[k];
      }
      for (int k = 0; k < K; ++k) dst[k * tile_plane + e] = v[k];  // tile(k, j, i), LayoutRight
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K * halo_len), [&](int kj) {
      const int k = kj / halo_len, j = kj % halo_len, l = a.source(p.l0 - a.offset + j);
      T* dst = &tile(k, j, 0);
      if (l >= 0) {
        const T* src = &in(k, a.in_index(p.outer, l, p.i0));
        KSSIM_VECTORIZE
        for (int i = 0; i < n_inner; ++i) dst[i] = src[i];
        for (int i = n_inner; i < tile_inner; ++i) dst[i] = fill[k];
      } else {
        for (int i = 0; i < tile_inner; ++i) dst[i] = fill[k];
      }
    });
  }
}

// Host staging of one row segment of a row pass: dst[j] = src[(first + j) * stride] - offset where
// 0 <= first + j < n; elsewhere fill, or, under Reflect and Replicate padding, the pixel the position reads
// (Geometry.hpp) less the offset; for j in [0, count). A source of a storage type S is converted to T
// (Storage.hpp). A contiguous source takes the loop the compiler vectorises.
template <class T, class S>
KOKKOS_INLINE_FUNCTION void stage_row_segment(T* dst, const S* src, std::size_t stride, int first, int count, int n,
                                              T offset, T fill, Padding padding = Padding::Same) {
  const int lo = Kokkos::min(count, Kokkos::max(0, -first));         // first staged column inside the row
  const int hi = Kokkos::max(lo, Kokkos::min(count, n - first));     // one past the last
  const auto outside = [&](int j) {
    const int q = padded_source(first + j, n, padding);
    return q < 0 ? fill : to_compute<T>(src[std::size_t(q) * stride]) - offset;
  };
  for (int j = 0; j < lo; ++j) dst[j] = outside(j);
  if (stride == 1) {
    KSSIM_VECTORIZE
    for (int j = lo; j < hi; ++j) dst[j] = to_compute<T>(src[first + j]) - offset;
  } else {
    for (int j = lo; j < hi; ++j) dst[j] = to_compute<T>(src[std::size_t(first + j) * stride]) - offset;
  }
  for (int j = hi; j < count; ++j) dst[j] = outside(j);
}

// Host staging loops ask for the row this many rows ahead while they copy the current one (the rows of a
// tile are short runs, 0.5 KiB, too short for the hardware prefetcher to get ahead of the copy). 2 CPU
// cores, 1x3x1080x1920 float, one thread's CPU time: forward 41.4-42.3 -> 39.4-40.8 ms, fwd+bwd 77-84 ->
// 75-79 ms with 4 rows (2 and 8 rows: the same within the noise of a loaded machine). KSSIM_TUNE_PREFETCH_ROWS
// (Tuning.hpp).
inline constexpr int staging_prefetch_rows = KSSIM_TUNE_PREFETCH_ROWS;

// A hint (host code only; nothing on GPUs): fetch the cache lines of src[first .. first + count) that lie
// inside [0, n) of a contiguous row.
template <class T>
KOKKOS_INLINE_FUNCTION void prefetch_row_segment(const T* src, int first, int count, int n) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
  const int lo = Kokkos::max(0, first), hi = Kokkos::min(n, first + count);
  constexpr int line = int(64 / sizeof(T));
  for (int j = lo; j < hi; j += line) __builtin_prefetch(src + j);
  if (hi > lo) __builtin_prefetch(src + hi - 1);
#else
  (void)src, (void)first, (void)count, (void)n;
#endif
}

// Stores the first n of Chunk consecutive values; a full chunk is one fixed-length loop (a vector store on
// hosts). Loops over a small array always run to its compile-time length (with a test inside): a
// runtime trip count would make GPU compilers keep the array in local memory instead of registers.
template <int Chunk, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_chunk(T* dst, const T (&v)[Chunk], int n) {
  if (n == Chunk) {
    KSSIM_VECTORIZE
    for (int u = 0; u < Chunk; ++u) dst[u] = v[u];
  } else {
    for (int u = 0; u < Chunk; ++u)
      if (u < n) dst[u] = v[u];
  }
}

// Correlation of K staged planes for Chunk consecutive outputs, tap t of plane k starting at
// first + k * plane_stride + t * tap_stride: acc[k][u] = sum_t w[t] first_k[t * tap_stride + u].
// All planes in one tap loop: K independent accumulation chains. Taps: see FixedTaps.hpp.
template <int K, int Chunk, int Taps, class T, class Window>
KOKKOS_FORCEINLINE_FUNCTION void correlate_planes(const T* first, std::size_t plane_stride, std::size_t tap_stride,
                                                  const Window& window, T (&acc)[K][Chunk]) {
  for (int k = 0; k < K; ++k)
    for (int u = 0; u < Chunk; ++u) acc[k][u] = 0;
  KSSIM_UNROLL
  for (int t = 0; t < tap_count<Taps>(window); ++t) {
    const T wt = window.weight[t];
    for (int k = 0; k < K; ++k) {
      const T* r = first + k * plane_stride + t * tap_stride;
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) acc[k][u] += wt * r[u];
    }
  }
}

// The correlation of K staged planes for a block of Rows x Chunk outputs: tile rows j0 .. j0+Rows-1,
// columns i0 .. i0+Chunk-1. Each staged row is read once and used for every output row it touches, so a
// block of Rows outputs costs Rows + window - 1 scratch reads per plane instead of Rows * window.
template <int K, int Rows, int Chunk, int Taps, class Scratch, class Window, class T>
KOKKOS_FORCEINLINE_FUNCTION void correlate_axis_tile(const Scratch& tile, const Window& window, int j0, int i0,
                                                     T (&acc)[K][Rows][Chunk]) {
  for (int k = 0; k < K; ++k)
    for (int q = 0; q < Rows; ++q)
      for (int u = 0; u < Chunk; ++u) acc[k][q][u] = 0;
  if constexpr (Rows == 1) {  // hosts: the plain tap loop
    T flat[K][Chunk];
    correlate_planes<K, Chunk, Taps>(&tile(0, j0, i0), tile.stride(0), tile.stride(1), window, flat);
    for (int k = 0; k < K; ++k)
      for (int u = 0; u < Chunk; ++u) acc[k][0][u] = flat[k][u];
    return;
  }
  const int taps = tap_count<Taps>(window);
  KSSIM_UNROLL
  for (int s = 0; s < Rows + taps - 1; ++s) {
    T v[K][Chunk];
    for (int k = 0; k < K; ++k) {
      const T* row = &tile(k, j0 + s, i0);
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) v[k][u] = row[u];
    }
    for (int q = 0; q < Rows; ++q) {
      const int t = s - q;  // tap of staged row s for output row q
      if (t < 0 || t >= taps) continue;
      const T wt = window.weight[t];
      for (int k = 0; k < K; ++k) {
        KSSIM_VECTORIZE
        for (int u = 0; u < Chunk; ++u) acc[k][q][u] += wt * v[k][u];
      }
    }
  }
}

// The whole compute phase of a pass that stores K planes per output: each team thread takes Rows
// consecutive outputs along the axis, each vector lane Chunk consecutive contiguous elements;
// compute(j0, i0, acc) fills T acc[K][Rows][Chunk] for the block at tile row j0, tile column i0, and the
// outputs inside the pass are stored.
template <int K, int Rows, int Chunk, class T, class Team, class Out, class Compute>
KOKKOS_INLINE_FUNCTION void compute_and_store_axis_tile(const Team& team, const AxisPass& a, const AxisTilePosition& p,
                                                        int tile_len, int tile_inner, const Out& out,
                                                        const Compute& compute) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile_len / Rows), [&](int jg) {
    const int j0 = jg * Rows;
    if (p.l0 + j0 >= a.len_out) return;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, tile_inner / Chunk), [&](int ic) {
      const int i0 = ic * Chunk;
      if (p.i0 + i0 >= a.inner) return;
      T acc[K][Rows][Chunk];
      compute(j0, i0, acc);
      const int nu = p.i0 + i0 + Chunk <= a.inner ? Chunk : a.inner - p.i0 - i0;
      for (int q = 0; q < Rows && p.l0 + j0 + q < a.len_out; ++q) {
        const std::size_t idx = a.out_index(p.outer, p.l0 + j0 + q, p.i0 + i0);
        for (int k = 0; k < K; ++k) store_chunk<Chunk>(&out(k, idx), acc[k][q], nu);
      }
    });
  });
}

// The compute phase of a pass that only stores its K correlated planes (every adjoint axis pass).
template <int K, int Rows, int Chunk, int Taps, class T, class Team, class Scratch, class Window, class Out>
KOKKOS_INLINE_FUNCTION void correlate_and_store_axis_tile(const Team& team, const Scratch& tile, const Window& window,
                                                          const AxisPass& a, const AxisTilePosition& p,
                                                          int tile_len, int tile_inner, const Out& out) {
  compute_and_store_axis_tile<K, Rows, Chunk, T>(team, a, p, tile_len, tile_inner, out,
                                                 [&](int j0, int i0, T(&acc)[K][Rows][Chunk]) {
                                                   correlate_axis_tile<K, Rows, Chunk, Taps>(tile, window, j0, i0, acc);
                                                 });
}

}  // namespace kssim::impl
