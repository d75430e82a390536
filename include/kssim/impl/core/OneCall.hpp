// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the one-call functions of every metric share (kssim/SSIM.hpp, MSSSIM.hpp, MaskedSSIM.hpp, L1SSIMLoss.hpp):
// the checked, unified form of their two images, the checked gradient arguments of their *_grad functions,
// and the kernel that writes a mean into the caller's rank-0 View. Their workspaces are kept in
// ssim/PlanCache.hpp.

#include <kssim/Options.hpp>
#include <kssim/ViewChecks.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/stages/MapBlock.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

// The checked, unified form of (img1, img2) shared by every entry point. Images of a 16-bit type S are computed
// in T = float.
template <class ExecSpace, class View1, class View2>
struct ImagePair {
  using S = value_type_of<View1>;
  using T = compute_type_t<S>;
  using Mem = typename ExecSpace::memory_space;
  Geometry g;
  InputArray<S> x, y;

  // Checked when the entry point declares its ImagePair, its first statement: kssim's message comes first.
  static_assert(check_ssim_image_view<ExecSpace, View1>() && check_ssim_image_view<ExecSpace, View2>() &&
                check_same_kind<View1, View2>());

  ImagePair(const View1& img1, const View2& img2, const Options& opts) {
    require_same_extents(img1, img2);
    g = make_geometry<batch_rank_v<View1>>(batch_extents(img1), opts);
    x = as_rank5<InputArray<S>>(img1);
    y = as_rank5<InputArray<S>>(img2);
  }
};

// The checked gradient arguments of a one-call *_grad function: which are wanted ({} or an empty View skips
// one) and their rank-5 arrays (null where skipped). O: the gradients' type, the images' or, for 16-bit images,
// float.
template <class ExecSpace, class View1, class Grad1, class Grad2>
struct GradientArgs {
  static_assert(check_ssim_output_view<ExecSpace, Grad1, value_type_of<View1>>() &&
                check_ssim_output_view<ExecSpace, Grad2, value_type_of<View1>>());
  using O = typename Grad1::value_type;
  static_assert(std::is_same_v<O, typename Grad2::value_type>, "kssim: both gradients must hold the same type");
  static_assert(Grad1::rank() == View1::rank() && Grad2::rank() == View1::rank(),
                "kssim: both Views must have the same rank");
  PartialPlanes wanted;
  OutputArray<O> g1, g2;

  GradientArgs(const View1& img1, const Grad1& grad1, const Grad2& grad2)
      : wanted{!is_empty_view(grad1), !is_empty_view(grad2)} {
    const auto extents = extents_of(img1);
    if (wanted.image1) {
      require_extents("grad1", grad1, extents);
      g1 = as_rank5<OutputArray<O>>(grad1);
    }
    if (wanted.image2) {
      require_extents("grad2", grad2, extents);
      g2 = as_rank5<OutputArray<O>>(grad2);
    }
  }
};

// Its lambda captures raw pointers only, never a View (KernelArrays.hpp).
template <class ExecSpace, class MeanView>
void write_mean(const ExecSpace& exec, const Kokkos::View<const double, typename ExecSpace::memory_space>& total,
                double count, const MeanView& mean) {
  const double* sum = total.data();
  typename MeanView::value_type* out = mean.data();
  launch("kssim::write_mean", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
         KOKKOS_LAMBDA(int) { *out = typename MeanView::value_type(*sum / count); });
}

}  // namespace kssim::impl
