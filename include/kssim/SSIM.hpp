// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// kssim::SSIM: a reusable SSIM loss for one image shape, for training loops. The constructor allocates
// the whole workspace; forward() and backward() then allocate nothing and never synchronise the host.
//
//   kssim::SSIM<Kokkos::Cuda, float> loss(exec, {N, C, H, W});          // gradient of image 1 by default
//   loss.forward(render, target);                                        // loss.value(): rank-0 device View
//   loss.backward(grad_render, {}, kssim::Accumulate::Yes, -0.2);        // += d(-0.2 * SSIM)/d render
//   loss.backward(dloss, grad_render);   // dloss: a rank-0 device View<float> or <double>, read by the kernels
//   ({} for a gradient that is not wanted; an empty View works too)
//
// backward() uses the images of the last forward(): keep them alive and unchanged in between.
//
// Problems past 2^30 elements or Options::max_workspace_bytes run in pieces (impl/ssim/Slabs.hpp): groups of
// images or channels, or slabs along the outermost spatial axis; then backward() recomputes each piece's
// forward statistics (one more forward pass), and still allocates nothing.
//
// 16-bit images (impl/core/Storage.hpp): ValueType is their type (e.g. Kokkos::Experimental::half_t); the
// kernels compute in float, and the map and gradients hold OutputType: ValueType by default (rounded to
// it once, after any upstream factor and accumulation), or float:
//   kssim::SSIM<Kokkos::Cuda, Kokkos::Experimental::half_t, 4, float> loss(exec, {N, C, H, W});

#include <kssim/Functions.hpp>
#include <kssim/Options.hpp>
#include <kssim/ViewChecks.hpp>
#include <kssim/impl/ssim/Slabs.hpp>
#include <kssim/impl/core/TrainingObject.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <optional>
#include <stdexcept>

namespace kssim {

template <class ExecutionSpace, class ValueType, int Rank = 4, class OutputType = ValueType>
class SSIM : public impl::TrainingObject<SSIM<ExecutionSpace, ValueType, Rank, OutputType>, ExecutionSpace, ValueType,
                                         Rank, true, OutputType> {
  using Shell = impl::TrainingObject<SSIM, ExecutionSpace, ValueType, Rank, true, OutputType>;
  friend Shell;
  using typename Shell::Images;
  using typename Shell::Outputs;
  using typename Shell::Targets;
  using T = compute_type_t<ValueType>;

 public:
  using typename Shell::memory_space;
  using output_type = OutputType;

  SSIM(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const Options& opts = {},
       Gradients gradients = Gradients::Image1)
      : Shell("kssim::SSIM", exec, extents),
        plan_(exec, impl::make_geometry<Rank>(extents, opts), opts, impl::planes_for(gradients)) {}

  // How many pieces each pass runs in (1 unless the problem is split), and the workspace they hold.
  int pieces() const { return plan_.pieces(); }
  std::size_t workspace_bytes() const { return plan_.workspace_bytes(); }

  // Computes the mean SSIM into value(); optionally writes the map. No host synchronisation.
  template <class View1, class View2>
  void forward(const View1& img1, const View2& img2) {
    forward(img1, img2, Kokkos::View<OutputType*****, Kokkos::LayoutStride, memory_space>{});
  }
  template <class View1, class View2, class MapView>
  void forward(const View1& img1, const View2& img2, const MapView& map) {
    const auto map5 = this->map_array(map, plan_.geometry());
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, map5);
    });
  }

  // forward() that also writes the mean, rounded once to float, to `value` (one float in memory_space, e.g. a
  // framework's result tensor) from the kernel that computes it, instead of a copy of its own afterwards.
  template <class View1, class View2>
  void forward_into(const View1& img1, const View2& img2, float* value) {
    if (value == nullptr) throw std::invalid_argument("kssim: SSIM::forward_into: null value pointer");
    this->run_forward(img1, img2, [&](const ExecutionSpace& exec, const auto& x, const auto& y) {
      plan_.forward(exec, x, y, {}, value);
    });
  }

  // Mean SSIM of the last forward(), on the device (value_on_host() copies it: impl/core/TrainingObject.hpp).
  Kokkos::View<const double, memory_space> value() const { return plan_.mean(); }
  // Sums of the map over each (n, c) slice of the last forward(), n major (N * C values), on the device:
  // per-image and per-channel means without a second pass (the PyTorch binding's reduction="none").
  Kokkos::View<const double*, memory_space> slice_sums() const { return plan_.image_sums(); }

  // backward(): gradients of upstream * mean SSIM (impl/core/TrainingObject.hpp).

 private:
  void backward_arrays(const ExecutionSpace& exec, const Images& x, const Images& y,
                       const Targets& out) {
    plan_.backward(exec, x, y, out);
  }

  impl::SlabPlan<ExecutionSpace, T, ValueType, OutputType> plan_;
};

}  // namespace kssim
