// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Tile shapes (compile-time, independent of team size) and launch shapes (runtime, from the backend).

#include <kssim/Options.hpp>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kssim::impl {

template <class ExecSpace>
inline constexpr bool is_gpu_space_v =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

// Which kernel variants run: the GPU variants (tile shapes, 128-bit staging, compile-time tap counts,
// shared-centre moments, register blocking, multi-thread sums) on GPU execution spaces, the host variants
// elsewhere. Tests define KSSIM_TEST_GPU_CODE_PATHS to run the GPU variants on host backends too, so that
// CI (which has no GPU) checks them against the float64 reference (CTest label gpu_paths). Never defined
// in production builds.
template <class ExecSpace>
inline constexpr bool gpu_code_paths_v =
#if defined(KSSIM_TEST_GPU_CODE_PATHS)
    true;
#else
    is_gpu_space_v<ExecSpace>;
#endif

// GPU tiles are sized for coalesced 128-byte row segments and scratch well under 48 KiB per team for
// the largest window; host tiles are long along the contiguous axis so the inner loops vectorise.
template <class ExecSpace, class T>
struct Tiles {
  static constexpr bool gpu = gpu_code_paths_v<ExecSpace>;
  // Row passes (along W, the contiguous axis): rows x output columns per team.
  static constexpr int row_rows = gpu ? 8 : 4;
  static constexpr int row_cols = gpu ? int(512 / sizeof(T)) : 256;
  // Column and depth passes (along a strided axis): outputs along the axis x contiguous elements.
  // Float GPU tiles are 64 long: the window's halo is a smaller share of the staging, and each team
  // thread computes two blocks of axis_rows outputs per tile (1920x1080: map pass 91 -> 80 us,
  // adjoint column 63 -> 60 us against 32; double keeps 32, its scratch tile being twice as large).
  static constexpr int axis_len = gpu && sizeof(T) == 4 ? 64 : 32;
  static constexpr int axis_inner = gpu ? int(128 / sizeof(T)) : 256;
  // GPU tiles live in level-0 scratch (shared memory). Host backends cap level 0 at 32 KiB per team, while
  // both levels are plain cache-resident memory there, so the longer host tiles use level 1.
  static constexpr int scratch_level = is_gpu_space_v<ExecSpace> ? 0 : 1;
  // Consecutive outputs each vector lane computes. Hosts: a fixed-size innermost loop over consecutive
  // outputs is what the compiler vectorises (two 256-bit vectors). GPUs: in float row passes four, so
  // that each staged sample is loaded once for all the outputs whose windows cover it (the loops unroll
  // with a fixed tap count, FixedTaps.hpp; 128-bit loads and stores); in double row passes one (four
  // outputs' accumulators and samples cost more registers than the reuse saves: 207 vs 122 us measured);
  // in axis passes one (consecutive lanes give conflict-free scratch reads and coalesced stores, and
  // axis_rows below does the reuse).
  static constexpr int row_chunk = gpu ? (sizeof(T) == 4 ? 4 : 1) : int(64 / sizeof(T));
  static constexpr int axis_chunk = gpu ? 1 : int(64 / sizeof(T));
  // Consecutive outputs along the axis of a column/depth pass each team thread computes, reusing every
  // staged row for all of them (registers instead of repeated scratch reads). Hosts: one, so the tap loop
  // has no bounds test and the accumulators of all planes fit the 16 vector registers of AVX2.
  static constexpr int axis_rows = gpu ? 4 : 1;
  static_assert(row_cols % row_chunk == 0 && axis_inner % axis_chunk == 0 && axis_len % axis_rows == 0);
};

// Scratch tiles of the row passes. On GPUs each lane reads the staged samples of its row_chunk
// consecutive outputs as aligned vectors (128-bit loads: a quarter of the load instructions, and no bank
// conflicts, which scalar loads at a stride of row_chunk words have): rows are padded to a multiple of
// row_chunk elements and the tile is aligned to a chunk's bytes, and no more is promised.
// Host runs of the GPU paths (KSSIM_TEST_GPU_CODE_PATHS) place the tile at an address aligned to a chunk's
// bytes and not to twice that, as a GPU's scratch may: a vector access that assumes more alignment than the
// chunk gives (double's chunk is one element) then fails check_quad_aligned below on the host too. Hosts
// allow misaligned vector accesses, so without this a GPU-only "misaligned address" passed there (as the fused
// forward's halo carry for double once did).
template <class ExecSpace, class T>
struct RowScratch {
  using Scratch = Kokkos::View<T***, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int chunk = Tiles<ExecSpace, T>::row_chunk;
  static constexpr std::size_t align = chunk * sizeof(T);
  // Host runs of the GPU paths: the tile moved by `align` off any address aligned to twice that (above).
#if defined(KSSIM_TEST_GPU_CODE_PATHS)
  static constexpr std::size_t test_shift = align;
#else
  static constexpr std::size_t test_shift = 0;
#endif
  KOKKOS_INLINE_FUNCTION static constexpr int pitch(int count) { return (count + chunk - 1) / chunk * chunk; }
  static std::size_t bytes(int planes, int rows, int count) {
    return std::size_t(planes) * rows * pitch(count) * sizeof(T) + align + test_shift;  // + alignment slack
  }
  template <class Team>
  KOKKOS_INLINE_FUNCTION static Scratch allocate(const Team& team, int planes, int rows, int count) {
    const std::size_t size = std::size_t(planes) * rows * pitch(count) * sizeof(T);
    const int level = int(Tiles<ExecSpace, T>::scratch_level);
    char* p = static_cast<char*>(team.team_scratch(level).get_shmem_aligned(size + test_shift, std::ptrdiff_t(align)));
    if (test_shift > 0 && reinterpret_cast<std::uintptr_t>(p) % (2 * align) == 0) p += test_shift;
    return Scratch(reinterpret_cast<T*>(p), planes, rows, pitch(count));
  }
};

// Whether p may be used with load_quads / store_quads.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION bool quad_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (4 * sizeof(T)) == 0;
}

// Host runs of the GPU paths stop at a vector access that a GPU would refuse (see RowScratch); nothing
// elsewhere.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void check_quad_aligned([[maybe_unused]] const T* p) {
#if defined(KSSIM_TEST_GPU_CODE_PATHS)
  if (!quad_aligned(p)) Kokkos::abort("kssim: internal error: a vector access of four elements at a misaligned address");
#endif
}

// v[0 .. N) = p[0 .. N) for p aligned to 4 * sizeof(T) bytes, as N/4 vector loads of four elements
// (compilers do not merge the scalar loads of an unrolled loop into vector loads on their own).
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_quads(const T* p, T (&v)[N]) {
  static_assert(N % 4 == 0);
  struct alignas(4 * sizeof(T)) Quad {
    T e[4];
  };
  check_quad_aligned(p);
  const Quad* q = reinterpret_cast<const Quad*>(p);
  for (int k = 0; k < N / 4; ++k) {
    const Quad x = q[k];
    for (int u = 0; u < 4; ++u) v[4 * k + u] = x.e[u];
  }
}

// p[0 .. N) = v[0 .. N) for p aligned to 4 * sizeof(T) bytes, as N/4 vector stores.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_quads(T* p, const T (&v)[N]) {
  static_assert(N % 4 == 0);
  struct alignas(4 * sizeof(T)) Quad {
    T e[4];
  };
  check_quad_aligned(p);
  Quad* q = reinterpret_cast<Quad*>(p);
  for (int k = 0; k < N / 4; ++k) q[k] = Quad{{v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]}};
}

// Rows rows .. rows + count - 1 of every plane of a tile's scratch (RowScratch of Cols elements a row) become rows
// 0 .. count - 1: a team that walks down a chain of tiles carries the window's halo rows from one tile to the next
// instead of staging and row-blurring them again (FusedForward.hpp, FusedNormalizedForward.hpp). Only tiles at
// least as tall as the halo are chained, so the rows read and the rows written do not overlap. On GPUs one flat
// range, four elements per lane (128-bit scratch accesses; the rows hold whole, aligned chunks), where the
// compile-time tap count makes `count` a constant; on hosts row by row (no index arithmetic per element: with it
// the copy cost more than the row blur it saves, 2 cores). Quads only where RowScratch aligns rows to them (chunks
// of 4: float on GPUs). Double's GPU chunk is one element, its rows 8-byte aligned: 32-byte vector accesses there
// stop a GPU kernel with a misaligned address, while hosts allow them.
template <class ExecSpace, class T, int Planes, int Cols, class Team, class Scratch>
KOKKOS_INLINE_FUNCTION void carry_halo_rows(const Team& team, const Scratch& planes, int rows, int count) {
  constexpr int pitch = RowScratch<ExecSpace, T>::pitch(Cols);
  if constexpr (gpu_code_paths_v<ExecSpace> && RowScratch<ExecSpace, T>::chunk % 4 == 0) {
    constexpr int quads = pitch / 4;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, Planes * count * quads), [&](int e) {
      const int p = e / (count * quads), i = e / quads % count, j = e % quads * 4;
      T v[4];
      load_quads(&planes(p, rows + i, j), v);
      store_quads(&planes(p, i, j), v);
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Planes * count), [&](int r) {
      const T* from = &planes(r / count, rows + r % count, 0);
      T* to = &planes(r / count, r % count, 0);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, pitch), [&](int j) { to[j] = from[j]; });
    });
  }
}

// A TeamPolicy for `league` teams of a tile with `tile_rows` rows (team threads) and `tile_inner`
// contiguous elements (vector lanes). Options::team_size / vector_length override the backend's choice;
// an impossible request throws std::invalid_argument instead of failing inside Kokkos.
// Threads per team by default on GPUs. MinTeams > 1 declares it as a launch bound with MinTeams teams per
// multiprocessor, capping the registers the compiler may use (without a bound it budgets for 1024
// threads; a bound of one team lets it use far more registers than the kernels can afford).
inline constexpr int max_team_threads = 256;

// The vector length make_team_policy gives a tile of `tile_inner` contiguous elements (kernels that need their
// lanes' count take it from here).
template <class ExecSpace>
int team_vector_length(const Options& opts, int tile_inner) {
  const int vmax = Kokkos::TeamPolicy<ExecSpace>::vector_length_max();
  const int fit = gpu_code_paths_v<ExecSpace> ? std::min(vmax, tile_inner) : 1;
  const int vector = opts.vector_length ? opts.vector_length : fit;
  if (vector > vmax)
    throw std::invalid_argument("kssim: vector_length " + std::to_string(vector) + " exceeds this backend's maximum " +
                                std::to_string(vmax));
  return vector;
}

template <int MinTeams = 1, class ExecSpace, class Functor, class Tag>
auto make_team_policy(const ExecSpace& exec, int league, int tile_rows, int tile_inner,
                                               int scratch_level, std::size_t scratch_bytes, const Options& opts,
                                               const Functor& functor, Tag tag) {
  // Dynamic scheduling: on hosts, a thread delayed by other load on the machine does not hold up the rest.
  // Every team writes only its own outputs, so the result does not depend on the schedule.
  using Policy = std::conditional_t<
      MinTeams == 1, Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>,
      Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::LaunchBounds<max_team_threads, MinTeams>>>;
  constexpr bool gpu = gpu_code_paths_v<ExecSpace>;
  const int vector = team_vector_length<ExecSpace>(opts, tile_inner);
  Policy probe(exec, std::max(league, 1), 1, vector);
  probe.set_scratch_size(scratch_level, Kokkos::PerTeam(scratch_bytes));
  if (scratch_bytes > std::size_t(probe.scratch_size_max(scratch_level)))
    throw std::invalid_argument("kssim: a tile needs " + std::to_string(scratch_bytes) +
                                " bytes of team scratch, more than this backend offers (" +
                                std::to_string(probe.scratch_size_max(scratch_level)) + "); use a smaller window");
  const int tmax = probe.team_size_max(functor, tag);
  // The default never exceeds what the backend allows (host backends with GPU code paths: a few threads).
  int team = opts.team_size ? opts.team_size
                            : (gpu ? std::clamp(std::min(max_team_threads / vector, tile_rows), 1, tmax) : 1);
  if (team > tmax)
    throw std::invalid_argument("kssim: team_size " + std::to_string(team) + " exceeds this kernel's maximum " +
                                std::to_string(tmax) + " on this backend");
  Policy policy(exec, league, team, vector);
  policy.set_scratch_size(scratch_level, Kokkos::PerTeam(scratch_bytes));
  // Light-weight kernels pass the functor as a kernel argument. Otherwise Kokkos' CUDA backend copies
  // functors over 512 bytes to constant memory, and waits on the host for the previous such kernel
  // before each launch: a hidden synchronisation per stage.
  return Kokkos::Experimental::require(policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace kssim::impl
