// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The shell shared by the training objects (kssim::SSIM, MSSSIM, MaskedSSIM, L1SSIMLoss): the compile-time
// rules on their template arguments, the checks of images, maps and gradients, the images kept from the
// last forward() for backward(), the two backward() overloads (host factor / device upstream factor) and
// value_on_host(). Each object keeps its own plan, forward() and value(), which differ.
//
// CRTP: backward() ends in Derived::backward_arrays(exec, x, y, out) (GradientTargets, PassArguments.hpp; null
// arrays for gradients not wanted), and value_on_host() reads Derived::value(); the derived class declares the
// shell a friend so that backward_arrays may stay private.

#include <kssim/Options.hpp>
#include <kssim/ViewChecks.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/core/HostValue.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/core/PassArguments.hpp>
#include <kssim/impl/stages/MapBlock.hpp>
#include <kssim/impl/core/Storage.hpp>
#include <kssim/impl/core/UpstreamFactor.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kssim::impl {

// The gradient planes a plan keeps for the gradients an object was made for.
inline PartialPlanes planes_for(Gradients g) {
  return {g == Gradients::Image1 || g == Gradients::Both, g == Gradients::Image2 || g == Gradients::Both};
}

// ValueType: float, double or a 16-bit storage type (impl/core/Storage.hpp); OutputType, the maps' and gradients'
// type: ValueType, or float for 16-bit images.
template <class Derived, class ExecutionSpace, class ValueType, int Rank, class OutputType = ValueType>
class TrainingObject {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>, "kssim: ExecutionSpace must be an execution space");
  static_assert(is_storage_type_v<ValueType>,
                "kssim: ValueType must be float, double or a 16-bit float type (impl/core/Storage.hpp)");
  static_assert(!is_host_16bit_v<ValueType> || !is_gpu_space_v<ExecutionSpace>,
                "kssim: _Float16 / __bf16 images need a host execution space; on GPUs use "
                "Kokkos::Experimental::half_t / bhalf_t");
  static_assert(std::is_same_v<OutputType, ValueType> || std::is_same_v<OutputType, compute_type_t<ValueType>>,
                "kssim: OutputType is ValueType, or float for 16-bit images");
  static_assert(Rank == 4 || Rank == 5, "kssim: Rank is 4 (N, C, H, W) or 5 (N, C, D, H, W)");

 public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using value_type = ValueType;
  // The type of a gradient argument given as {} (not wanted): deduction cannot see through a braced list.
  using gradient_view =
      Kokkos::View<std::conditional_t<Rank == 4, OutputType****, OutputType*****>, Kokkos::LayoutStride, memory_space>;

  const std::array<int, Rank>& extents() const { return extents_; }

  // The instance the object's kernels run on, and a way to move later calls to another instance of the same
  // space (e.g. another CUDA stream of the same device). The object keeps its workspace; the caller orders
  // the hand-over: work queued on the old instance must be done, or waited for on the new one, before the
  // new one runs (an event, or old.fence()).
  const ExecutionSpace& execution_space_instance() const { return exec_; }
  void set_execution_space_instance(const ExecutionSpace& exec) { exec_ = exec; }

  // The value of the last forward(), copied to the host (synchronises).
  double value_on_host() const {
    return host_value(exec_, derived().value(), (std::string(name_) + "::value_on_host").c_str());
  }

  // Gradients of upstream * value() with respect to the images of the last forward(). Either gradient View
  // may be empty or {} (loss.backward({}, grad2) too). `upstream` is a host factor or a rank-0 device View of
  // double or float (e.g. d loss / d value, computed on the device): the backward's kernels read it where it is.
  template <class Grad1 = gradient_view, class Grad2 = writable_like_t<Grad1>>
    requires(Grad1::rank() != 0)  // a rank-0 first argument is the device upstream factor (overload below)
  void backward(const Grad1& grad1, const Grad2& grad2 = {}, Accumulate mode = Accumulate::No,
                double upstream = 1.0) {
    run_backward(grad1, grad2, mode, upstream, UpstreamFactor{});
  }
  template <class Upstream, class Grad1 = gradient_view, class Grad2 = writable_like_t<Grad1>>
    requires(Kokkos::is_view_v<Upstream> && Upstream::rank() == 0)
  void backward(const Upstream& upstream, const Grad1& grad1, const Grad2& grad2 = {},
                Accumulate mode = Accumulate::No) {
    using F = typename Upstream::non_const_value_type;
    static_assert(std::is_same_v<F, double> || std::is_same_v<F, float>,
                  "kssim: the device upstream factor is a rank-0 View of double or float");
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename Upstream::memory_space>::accessible,
                  "kssim: the device upstream factor must be accessible from the object's execution space");
    if (upstream.data() == nullptr)
      throw std::invalid_argument(std::string(name_) + ": backward() got an unallocated upstream View");
    run_backward(grad1, grad2, mode, 1.0, UpstreamFactor(static_cast<const F*>(upstream.data())));
  }

 protected:
  using Images = InputArray<ValueType>;
  using Outputs = OutputArray<OutputType>;
  using Targets = GradientTargets<OutputType>;

  // `name` (a literal) names the object in runtime errors and fence labels.
  TrainingObject(const char* name, const ExecutionSpace& exec, const std::array<int, Rank>& extents)
      : name_(name), exec_(exec), extents_(extents) {}

  // Checks the images, keeps them for backward() (which reads them again) and runs the derived class's
  // forward pass run(exec, x, y). Check every other argument before: a refused forward() keeps the last one.
  template <class View1, class View2, class Run>
  void run_forward(const View1& img1, const View2& img2, const Run& run) {
    static_assert(int(View1::rank()) == Rank,
                  "kssim: a training object's images have its Rank (4: (N, C, H, W), 5: (N, C, D, H, W))");
    static_assert(check_ssim_image_view<ExecutionSpace, View1>() && check_same_kind<View1, View2>());
    static_assert(std::is_same_v<ValueType, value_type_of<View1>>, "kssim: image value type mismatch");
    require_extents("img1", img1, extents_);
    require_extents("img2", img2, extents_);
    x_ = as_rank5<Images>(img1);
    y_ = as_rank5<Images>(img2);
    run(exec_, x_, y_);
    has_forward_ = true;
  }

  // forward_into()'s destination, one float in memory_space; a null pointer is refused.
  float* value_pointer(float* value) const {
    if (value == nullptr) throw std::invalid_argument(std::string(name_) + "::forward_into: null value pointer");
    return value;
  }
  // An optional map of geometry g (an empty View gives a null array: no map written).
  template <class MapView>
  Outputs map_array(const MapView& map, const Geometry& g) const {
    static_assert(std::is_same_v<OutputType, value_type_of<MapView>>,
                  "kssim: the map must hold the object's OutputType");
    if (is_empty_view(map)) return {};
    check_ssim_output_view<ExecutionSpace, MapView, ValueType>();
    require_extents("map", map, map_extents<std::size_t(Rank)>(g));
    return as_rank5<Outputs>(map);
  }

 private:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  // An empty View gives a null array (that gradient is skipped).
  template <class Grad>
  Outputs gradient(const char* name, const Grad& grad) const {
    check_ssim_output_view<ExecutionSpace, Grad, ValueType>();
    static_assert(int(Grad::rank()) == Rank, "kssim: gradient rank differs from the object's Rank");
    static_assert(std::is_same_v<OutputType, typename Grad::value_type>,
                  "kssim: gradients must hold the object's OutputType");
    if (is_empty_view(grad)) return {};
    require_extents(name, grad, extents_);
    return as_rank5<Outputs>(grad);
  }

  template <class Grad1, class Grad2>
  void run_backward(const Grad1& grad1, const Grad2& grad2, Accumulate mode, double scale, UpstreamFactor upstream) {
    if (!has_forward_) throw std::logic_error(std::string(name_) + ": backward() called before forward()");
    static_cast<Derived&>(*this).backward_arrays(
        exec_, x_, y_,
        {gradient("grad1", grad1), gradient("grad2", grad2), scale, upstream, mode == Accumulate::Yes});
  }

  const char* name_;
  ExecutionSpace exec_;
  std::array<int, Rank> extents_;
  Images x_, y_;
  bool has_forward_ = false;
};

}  // namespace kssim::impl
