#pragma once
// Copies from global memory into team scratch that complete in the background (CUDA sm_80 and later:
// cp.async), so that a team's next tile is in flight while it computes the current one. A thread issues
// copies, later waits for all of its own (wait_scratch_copies) and may then read what it copied; other
// threads see the data after a team barrier that follows the wait. Elsewhere (older CUDA architectures, the
// host passes, the gpu_paths tests on host backends) the same calls copy at once, so the calling code and its
// results are the same everywhere; only CUDA gains time (async_scratch_copies_v says where a schedule uses them).

#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

namespace kssim::impl {

// Where the fused schedules copy their next tile in the background: CUDA, and the GPU code paths that the
// gpu_paths tests run on host backends (with the immediate copies below), so that CI checks that code's logic.
template <class ExecSpace>
inline constexpr bool async_scratch_copies_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<ExecSpace, Kokkos::Cuda> ||
#endif
#if defined(KSSIM_TEST_GPU_CODE_PATHS)
    !is_gpu_space_v<ExecSpace>;
#else
    false;
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define KSSIM_IMPL_CP_ASYNC 1
#endif

// dst[0 .. 4) = src[0 .. 4) for 4-byte T, both 16-byte aligned, dst in team scratch.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_quad_to_scratch(T* dst, const T* src) {
  static_assert(sizeof(T) == 4);
#if defined(KSSIM_IMPL_CP_ASYNC)
  const unsigned to = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
#else
  for (int u = 0; u < 4; ++u) dst[u] = src[u];
#endif
}

// The same for sources aligned to 4 bytes only: four 4-byte copies.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_words_to_scratch(T* dst, const T* src) {
  static_assert(sizeof(T) == 4);
#if defined(KSSIM_IMPL_CP_ASYNC)
  const unsigned to = unsigned(__cvta_generic_to_shared(dst));
  for (int u = 0; u < 4; ++u)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(to + 4u * u), "l"(src + u) : "memory");
#else
  for (int u = 0; u < 4; ++u) dst[u] = src[u];
#endif
}

// Waits until every copy this thread issued has landed in scratch.
KOKKOS_FORCEINLINE_FUNCTION void wait_scratch_copies() {
#if defined(KSSIM_IMPL_CP_ASYNC)
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

#undef KSSIM_IMPL_CP_ASYNC

}  // namespace kssim::impl
