// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Compile-time requirements on the Views passed to kssim, each with one readable message, and the
// runtime extent checks that throw std::invalid_argument naming the argument. The checks return true so that
// entry points evaluate them in a static_assert: that instantiates them at once, and their message comes
// before any error a wrong argument would cause further down (a memory space as the first argument, options
// in a gradient's place).

#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/Tiles.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kssim {

template <class View>
inline constexpr bool is_supported_layout_v =
    std::is_same_v<typename View::array_layout, Kokkos::LayoutRight> ||
    std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft> ||
    std::is_same_v<typename View::array_layout, Kokkos::LayoutStride>;

namespace impl {
// What every image, map and gradient View must satisfy, whatever it holds.
template <class ExecutionSpace, class View>
constexpr bool check_view_shape() {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>,
                "kssim: the first argument must be a Kokkos execution space instance (e.g. "
                "Kokkos::DefaultExecutionSpace{}), not a memory space or a View");
  static_assert(Kokkos::is_view_v<View>,
                "kssim: images, maps and gradients must be Kokkos::Views; the options come last, after every View "
                "(ssim_grad(exec, img1, img2, grad1, grad2, opts), {} for a gradient not wanted)");
  static_assert(View::rank() >= 2 && View::rank() <= 5,
                "kssim: images must be rank 2 (H, W), 3 (D, H, W), 4 (N, C, H, W) or 5 (N, C, D, H, W)");
  static_assert(is_supported_layout_v<View>, "kssim: Views must be LayoutRight, LayoutLeft or LayoutStride");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible,
                "kssim: the View's memory space must be accessible from the execution space");
  return true;
}
}  // namespace impl

// An image argument of float or double only (kssim::mpi): a rank-4 (N, C, H, W) or rank-5 (N, C, D, H, W) View
// (const allowed), in a layout kssim understands, whose memory `ExecutionSpace` can access; a rank-2 (H, W) or
// rank-3 (D, H, W) View is one image or one volume (N = C = 1) for the one-call functions.
template <class ExecutionSpace, class View>
constexpr bool check_image_view() {
  static_assert(impl::check_view_shape<ExecutionSpace, View>());
  using T = std::remove_const_t<typename View::value_type>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "kssim: images must hold float or double here (kssim::mpi takes no 16-bit images)");
  return true;
}

// An output argument: like an image but writable.
template <class ExecutionSpace, class View>
constexpr bool check_output_view() {
  static_assert(check_image_view<ExecutionSpace, View>());
  static_assert(!std::is_const_v<typename View::value_type>, "kssim: output Views must not be const");
  return true;
}

// An image argument of the metrics (SSIM, MS-SSIM, masked SSIM, the fused loss): like check_image_view, or a
// 16-bit storage type (impl/core/Storage.hpp); the compiler's _Float16 / __bf16 only on host execution spaces.
template <class ExecutionSpace, class View>
constexpr bool check_ssim_image_view() {
  static_assert(impl::check_view_shape<ExecutionSpace, View>());
  using S = std::remove_const_t<typename View::value_type>;
  static_assert(is_storage_type_v<S>,
                "kssim: images must hold float, double, or a 16-bit float type: Kokkos::Experimental::half_t or "
                "bhalf_t where this Kokkos build defines them (CUDA, HIP, SYCL), or the host compiler's _Float16 or "
                "__bf16 on host execution spaces");
  static_assert(!impl::is_host_16bit_v<S> || !impl::is_gpu_space_v<ExecutionSpace>,
                "kssim: _Float16 / __bf16 images need a host execution space; on GPUs use "
                "Kokkos::Experimental::half_t / bhalf_t");
  return true;
}

// A map or gradient of SSIM for images of value type S: writable, and of S or of its compute type
// (float for 16-bit images: the outputs are then not rounded to 16 bits).
template <class ExecutionSpace, class View, class S>
constexpr bool check_ssim_output_view() {
  static_assert(impl::check_view_shape<ExecutionSpace, View>());
  using O = typename View::value_type;
  static_assert(!std::is_const_v<O>, "kssim: output Views must not be const");
  static_assert(std::is_same_v<O, S> || std::is_same_v<O, compute_type_t<S>>,
                "kssim: maps and gradients hold the images' value type, or float for 16-bit images");
  return true;
}

template <class View1, class View2>
constexpr bool check_same_kind() {
  static_assert(std::is_same_v<std::remove_const_t<typename View1::value_type>,
                               std::remove_const_t<typename View2::value_type>>,
                "kssim: both Views must hold the same value type");
  static_assert(View1::rank() == View2::rank(), "kssim: both Views must have the same rank");
  return true;
}

// A Views of reduced values (rank 0, 1 or 2) of any floating type, writable and accessible.
template <class ExecutionSpace, class View, int Rank>
constexpr bool check_result_view() {
  static_assert(Kokkos::is_view_v<View>, "kssim: results must be written into Kokkos::Views");
  static_assert(View::rank() == Rank, "kssim: the result View has the wrong rank");
  static_assert(std::is_floating_point_v<typename View::value_type> && !std::is_const_v<typename View::value_type>,
                "kssim: result Views must hold a non-const floating-point type");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible,
                "kssim: the result View's memory space must be accessible from the execution space");
  return true;
}

namespace impl {

template <class View>
using value_type_of = std::remove_const_t<typename View::value_type>;

// A writable View shaped like an image View: the default type of a gradient argument passed as {}.
template <class View>
using writable_like_t =
    Kokkos::View<typename View::non_const_data_type, typename View::array_layout, typename View::memory_space>;

template <class View>
std::string extents_string(const View& v) {
  auto e = extents_of(v);
  return shape_string(e.data(), int(View::rank()));
}

template <class View, std::size_t N>
void require_extents(const char* name, const View& v, const std::array<int, N>& expected) {
  bool ok = View::rank() == N;
  for (std::size_t i = 0; ok && i < N; ++i) ok = int(v.extent(i)) == expected[i];
  if (!ok)
    throw std::invalid_argument(std::string("kssim: ") + name + " has extents " + extents_string(v) + ", expected " +
                                shape_string(expected.data(), int(N)));
}

template <class View1, class View2>
void require_same_extents(const View1& a, const View2& b) {
  for (int i = 0; i < int(View1::rank()); ++i)
    if (a.extent(i) != b.extent(i))
      throw std::invalid_argument("kssim: img1 and img2 must have the same extents, got " + extents_string(a) +
                                  " and " + extents_string(b));
}

// The map's extents for the problem g in a View of rank Rank: (N, C, Ho, Wo) or (N, C, Do, Ho, Wo); for one
// image or volume also (Ho, Wo) or (Do, Ho, Wo).
template <std::size_t Rank>
std::array<int, Rank> map_extents(const Geometry& g) {
  static_assert(Rank >= 2 && Rank <= 5);
  std::array<int, Rank> m{};
  if constexpr (Rank >= 4) {
    m[0] = g.n;
    m[1] = g.c;
  }
  if constexpr (Rank == 5 || Rank == 3) m[Rank - 3] = g.od;
  m[Rank - 2] = g.oh;
  m[Rank - 1] = g.ow;
  return m;
}

template <class View>
bool is_empty_view(const View& v) {
  return v.data() == nullptr && v.size() == 0;
}

}  // namespace impl
}  // namespace kssim
