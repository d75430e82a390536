#pragma once
// The argument checks of the training objects built on a Plan-like schedule (kssim::MSSSIM,
// kssim::MaskedSSIM): images and gradients of the object's value type, rank and extents, converted to the
// kernels' rank-5 arrays.

#include <kssim/ViewChecks.hpp>
#include <kssim/impl/KernelArrays.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <type_traits>

namespace kssim::impl {

template <class ExecutionSpace, class ValueType, int Rank>
struct TrainingArgs {
  std::array<int, Rank> extents;

  template <class View1, class View2>
  void check_images(const View1& img1, const View2& img2) const {
    check_image_view<ExecutionSpace, View1>();
    check_same_kind<View1, View2>();
    static_assert(int(View1::rank()) == Rank, "kssim: the images' rank differs from the object's Rank");
    static_assert(std::is_same_v<ValueType, std::remove_const_t<typename View1::value_type>>,
                  "kssim: image value type mismatch");
    require_extents("img1", img1, extents);
    require_extents("img2", img2, extents);
  }

  // An empty View gives a null array (that gradient is skipped).
  template <class Grad>
  OutputArray<ValueType> gradient(const char* name, const Grad& grad) const {
    check_output_view<ExecutionSpace, Grad>();
    static_assert(int(Grad::rank()) == Rank, "kssim: gradient rank differs from the object's Rank");
    static_assert(std::is_same_v<ValueType, typename Grad::value_type>, "kssim: gradient value type mismatch");
    if (is_empty_view(grad)) return {};
    require_extents(name, grad, extents);
    return as_rank5<OutputArray<ValueType>>(grad);
  }
};

}  // namespace kssim::impl
