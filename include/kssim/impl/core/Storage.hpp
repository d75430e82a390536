// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Storage types: what image Views may hold, as opposed to the type kssim computes in. float and double
// are computed in themselves; the 16-bit types are storage only: each pixel is converted to float where a
// kernel loads it, every statistic is float, and maps and gradients are rounded to their View's type where
// they are stored. No pass converts a whole image (but MS-SSIM's finest scale, msssim/FinestScale.hpp): the point
// of 16-bit inputs is half the bytes read.
//
// The 16-bit types:
//  - Kokkos::Experimental::half_t and bhalf_t where Kokkos defines them as 16-bit types (CUDA, HIP, SYCL
//    builds). Where Kokkos has no 16-bit type (host-only builds) they are aliases of float, and a View of
//    them is a float View: it is computed as float, with nothing rounded.
//  - The compiler's _Float16 and __bf16 (C++23's std::float16_t and std::bfloat16_t) on host execution
//    spaces, where the host compiler has them (GCC 13+ and Clang on x86-64 and AArch64): the 16-bit types
//    of host-only builds, and what the CPU tests, the CLI and the PyTorch binding's CPU path use. GPU
//    kernels cannot take them (the GPU compilers do not all accept them in device code): a static_assert says so.

#include <Kokkos_Core.hpp>
#include <bit>
#include <cstdint>
#include <type_traits>

#if defined(__FLT16_MAX__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(SYCL_LANGUAGE_VERSION)
#define KSSIM_HAS_HOST_FLOAT16 1
#else
#define KSSIM_HAS_HOST_FLOAT16 0
#endif
#if defined(__BFLT16_MAX__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(SYCL_LANGUAGE_VERSION)
#define KSSIM_HAS_HOST_BFLOAT16 1
#else
#define KSSIM_HAS_HOST_BFLOAT16 0
#endif

namespace kssim {

// Kokkos' 16-bit types when this Kokkos build has them (else void: no such storage type).
using kokkos_half_t =
    std::conditional_t<std::is_same_v<Kokkos::Experimental::half_t, float>, void, Kokkos::Experimental::half_t>;
using kokkos_bhalf_t =
    std::conditional_t<std::is_same_v<Kokkos::Experimental::bhalf_t, float>, void, Kokkos::Experimental::bhalf_t>;

// The host compiler's 16-bit types when it has them (else void).
#if KSSIM_HAS_HOST_FLOAT16
using host_float16_t = _Float16;
#else
using host_float16_t = void;
#endif
#if KSSIM_HAS_HOST_BFLOAT16
using host_bfloat16_t = __bf16;
#else
using host_bfloat16_t = void;
#endif

namespace impl {

template <class S>
inline constexpr bool is_kokkos_16bit_v =
    !std::is_void_v<S> && (std::is_same_v<S, kokkos_half_t> || std::is_same_v<S, kokkos_bhalf_t>);
template <class S>
inline constexpr bool is_host_16bit_v =
    !std::is_void_v<S> && (std::is_same_v<S, host_float16_t> || std::is_same_v<S, host_bfloat16_t>);

}  // namespace impl

// Whether kssim's SSIM takes images of S on ExecSpace (before const is removed).
template <class S>
inline constexpr bool is_16bit_storage_v = impl::is_kokkos_16bit_v<S> || impl::is_host_16bit_v<S>;
template <class S>
inline constexpr bool is_storage_type_v = std::is_same_v<S, float> || std::is_same_v<S, double> || is_16bit_storage_v<S>;

// The type the kernels compute in for images of S: float for the 16-bit types.
template <class S>
using compute_type_t = std::conditional_t<is_16bit_storage_v<S>, float, S>;

namespace impl {

// The host compiler's conversions of its 16-bit types, in bit operations that vectorise. GCC 16 converts
// __bf16 to and from float by a library call per element (__extendbfsf2, __truncsfbf2) and _Float16 to
// float by one scalar vcvtph2ps per element, so loops over them do not vectorise: 16-bit images took
// 2.3x (bfloat16) and 1.9x (half) float's time on 2 CPU cores (fwd, 1x3x1080x1920, -march=native).
#if KSSIM_HAS_HOST_BFLOAT16
inline float widen_host_bfloat16(__bf16 v) {  // exact: bfloat16 is float's upper half
  return std::bit_cast<float>(std::uint32_t(std::bit_cast<std::uint16_t>(v)) << 16);
}
inline __bf16 narrow_host_bfloat16(float f) {  // round to nearest even; NaN stays a (quiet) NaN
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  return std::bit_cast<__bf16>(std::uint16_t(nan ? (u >> 16) | 0x40u : rounded));
}
#endif
#if KSSIM_HAS_HOST_FLOAT16
// Exact, subnormals included, without subnormal float arithmetic (hosts may flush it). Selects by masks:
// GCC does not if-convert a ?: around float arithmetic under its default -ftrapping-math.
inline float widen_host_float16(_Float16 v) {
  const std::uint32_t h = std::bit_cast<std::uint16_t>(v), sign = (h & 0x8000u) << 16, em = h & 0x7fffu;
  // em < 0x400: em 2^-24, as (2^-14 + em 2^-24) - 2^-14 (normal floats only, exact)
  const std::uint32_t subnormal =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(0x38800000u | (em << 13)) - 0x1p-14f);
  const std::uint32_t special = 0u - std::uint32_t(em >= 0x7c00u), tiny = 0u - std::uint32_t(em < 0x400u);
  const std::uint32_t normal = (em << 13) + 0x38000000u + (special & 0x38000000u);  // rebias; Inf, NaN to 255
  return std::bit_cast<float>(((subnormal & tiny) | (normal & ~tiny)) | sign);
}
#endif

// Conversions at the loads and stores (static_cast: Kokkos' half_t converts to float only explicitly).
template <class T, class S>
KOKKOS_FORCEINLINE_FUNCTION T to_compute(const S& v) {
#if KSSIM_HAS_HOST_BFLOAT16
  if constexpr (std::is_same_v<S, __bf16> && std::is_same_v<T, float>) return widen_host_bfloat16(v);
#endif
#if KSSIM_HAS_HOST_FLOAT16
  if constexpr (std::is_same_v<S, _Float16> && std::is_same_v<T, float>) return widen_host_float16(v);
#endif
  return static_cast<T>(v);
}
template <class O, class T>
KOKKOS_FORCEINLINE_FUNCTION O to_storage(const T& v) {
#if KSSIM_HAS_HOST_BFLOAT16
  if constexpr (std::is_same_v<O, __bf16> && std::is_same_v<T, float>) return narrow_host_bfloat16(v);
#endif
  return static_cast<O>(v);
}

// A readable name of a storage type, for messages and benchmark names.
template <class S>
constexpr const char* storage_name() {
  if constexpr (std::is_same_v<S, float>) return "float";
  else if constexpr (std::is_same_v<S, double>) return "double";
  else if constexpr (std::is_same_v<S, kokkos_half_t> || std::is_same_v<S, host_float16_t>) return "half";
  else return "bhalf";
}

}  // namespace impl
}  // namespace kssim
