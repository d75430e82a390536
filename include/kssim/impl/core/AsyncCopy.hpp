#pragma once
// Copies from global memory into team scratch that the copying thread does not wait for: on CUDA devices of
// compute capability 8.0 and newer, cp.async (the load goes from L2 straight into shared memory, past the
// registers, and the thread issues its next instructions at once). The fused backward issues the next tile's
// partial planes before its adjoint row pass and waits for them only at the next tile, so their latency hides
// behind a pass instead of stalling the team at its staging (FusedBackward.hpp, KSSIM_TUNE_FUSED_BACKWARD_ASYNC).
// Elsewhere (HIP, hosts, the host compilation of CUDA code) they are plain copies, done when the call returns,
// and the same schedule is correct.
// A thread sees its own copies after wait_async_copies(); its team sees them after a team barrier that follows.

#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>
#include <type_traits>

namespace kssim::impl {

// Whether ExecSpace's team scratch (level 0) takes cp.async copies: CUDA's shared memory.
template <class ExecSpace>
inline constexpr bool async_copies_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
    false;
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define KSSIM_IMPL_CP_ASYNC 1
#endif

// *dst = *src for a 4- or 8-byte element, dst in level-0 team scratch where Async.
template <bool Async, class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_async(T* dst, const T* src) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
#if defined(KSSIM_IMPL_CP_ASYNC)
  if constexpr (Async) {
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(src), "n"(int(sizeof(T))) : "memory");
    return;
  }
#endif
  *dst = *src;
}

// dst[0 .. 16 bytes) = src[0 .. 16 bytes), both aligned to 16 bytes, dst in level-0 team scratch where Async.
template <bool Async, class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_quad_async(T* dst, const T* src) {
  static_assert(sizeof(T) == 4);
#if defined(KSSIM_IMPL_CP_ASYNC)
  if constexpr (Async) {
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
    return;
  }
#endif
  struct alignas(16) Quad {
    T e[4];
  };
  *reinterpret_cast<Quad*>(dst) = *reinterpret_cast<const Quad*>(src);
}

// Waits until every copy this thread issued has landed in scratch.
template <bool Async>
KOKKOS_FORCEINLINE_FUNCTION void wait_async_copies() {
#if defined(KSSIM_IMPL_CP_ASYNC)
  if constexpr (Async) asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

#undef KSSIM_IMPL_CP_ASYNC

}  // namespace kssim::impl
