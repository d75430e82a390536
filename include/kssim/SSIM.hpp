#pragma once
// kssim::SSIM: a reusable SSIM loss for one image shape, for training loops. The constructor allocates
// the whole workspace; forward() and backward() then allocate nothing and never synchronise the host.
//
//   kssim::SSIM<Kokkos::Cuda, float> loss(exec, {N, C, H, W});          // gradient of image 1 by default
//   loss.forward(render, target);                                        // loss.value(): rank-0 device View
//   loss.backward(grad_render, {}, kssim::Accumulate::Yes, -0.2);        // += d(-0.2 * SSIM)/d render
//   ({} for a gradient that is not wanted; an empty View works too)
//
// backward() uses the images of the last forward(): keep them alive and unchanged in between.
//
// Problems past 2^30 elements or Options::max_workspace_bytes run in pieces (impl/Slabs.hpp): groups of
// images or channels, or slabs along the outermost spatial axis; then backward() recomputes each piece's
// forward statistics (one more forward pass), and still allocates nothing.
//
// 16-bit images (impl/Storage.hpp): ValueType is their type (e.g. Kokkos::Experimental::half_t); the
// kernels compute in float, and the map and gradients hold OutputType: ValueType by default (rounded to
// it once, after any upstream factor and accumulation), or float:
//   kssim::SSIM<Kokkos::Cuda, Kokkos::Experimental::half_t, 4, float> loss(exec, {N, C, H, W});

#include <kssim/Functions.hpp>
#include <kssim/Options.hpp>
#include <kssim/ViewChecks.hpp>
#include <kssim/impl/Plan.hpp>
#include <kssim/impl/Slabs.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <optional>

namespace kssim {

// Which gradients an SSIM object prepares for (each costs one more plane of workspace and traffic).
enum class Gradients { None, Image1, Image2, Both };

// Whether backward() overwrites the gradient Views or adds to them (combined losses).
enum class Accumulate { No, Yes };

template <class ExecutionSpace, class ValueType, int Rank = 4, class OutputType = ValueType>
class SSIM {
  static_assert(Kokkos::is_execution_space_v<ExecutionSpace>, "kssim::SSIM: ExecutionSpace must be an execution space");
  static_assert(is_storage_type_v<ValueType>,
                "kssim::SSIM: ValueType must be float, double or a 16-bit float type (impl/Storage.hpp)");
  static_assert(!impl::is_host_16bit_v<ValueType> || !impl::is_gpu_space_v<ExecutionSpace>,
                "kssim::SSIM: _Float16 / __bf16 images need a host execution space; on GPUs use "
                "Kokkos::Experimental::half_t / bhalf_t");
  static_assert(std::is_same_v<OutputType, ValueType> || std::is_same_v<OutputType, compute_type_t<ValueType>>,
                "kssim::SSIM: OutputType is ValueType, or float for 16-bit images");
  static_assert(Rank == 4 || Rank == 5, "kssim::SSIM: Rank is 4 (N, C, H, W) or 5 (N, C, D, H, W)");
  using T = compute_type_t<ValueType>;

 public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using value_type = ValueType;
  using output_type = OutputType;

  SSIM(const ExecutionSpace& exec, const std::array<int, Rank>& extents, const Options& opts = {},
       Gradients gradients = Gradients::Image1)
      : exec_(exec),
        extents_(extents),
        plan_(exec, impl::make_geometry<Rank>(extents, opts), opts,
              impl::PartialPlanes{gradients == Gradients::Image1 || gradients == Gradients::Both,
                                  gradients == Gradients::Image2 || gradients == Gradients::Both}) {}

  const std::array<int, Rank>& extents() const { return extents_; }
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
    check_args<View1, View2>(img1, img2);
    static_assert(std::is_same_v<OutputType, impl::value_type_of<MapView>>,
                  "kssim::SSIM: the map must hold the object's OutputType");
    using Out = impl::OutputArray<OutputType>;
    Out map5;
    if (!impl::is_empty_view(map)) {
      check_ssim_output_view<ExecutionSpace, MapView, ValueType>();
      impl::require_extents("map", map, impl::map_extents<std::size_t(Rank)>(plan_.geometry()));
      map5 = impl::as_rank5<Out>(map);
    }
    x_ = impl::as_rank5<impl::InputArray<ValueType>>(img1);
    y_ = impl::as_rank5<impl::InputArray<ValueType>>(img2);
    plan_.forward(exec_, x_, y_, map5);
    has_forward_ = true;
  }

  // Mean SSIM of the last forward(), on the device.
  Kokkos::View<const double, memory_space> value() const { return plan_.mean(); }
  // Sums of the map over each (n, c) slice of the last forward(), n major (N * C values), on the device:
  // per-image and per-channel means without a second pass (the PyTorch binding's reduction="none").
  Kokkos::View<const double*, memory_space> slice_sums() const { return plan_.image_sums(); }
  // The mean, copied to the host (synchronises).
  double value_on_host() const {
    double v = 0;
    Kokkos::deep_copy(exec_, v, plan_.mean());
    exec_.fence("kssim::SSIM::value_on_host");
    return v;
  }

  // Gradients of upstream * mean SSIM with respect to the images of the last forward(). Either gradient
  // View may be empty. `upstream` is a host factor or a rank-0 device View<double> (e.g. d loss / d SSIM).
  template <class Grad1, class Grad2 = impl::writable_like_t<Grad1>>
    requires(Grad1::rank() != 0)  // a rank-0 first argument is the device upstream factor (overload below)
  void backward(const Grad1& grad1, const Grad2& grad2 = {}, Accumulate mode = Accumulate::No,
                double upstream = 1.0) {
    run_backward(grad1, grad2, mode, upstream, nullptr);
  }
  template <class Grad1, class Grad2 = impl::writable_like_t<Grad1>>
  void backward(const Kokkos::View<const double, memory_space>& upstream, const Grad1& grad1,
                const Grad2& grad2 = {}, Accumulate mode = Accumulate::No) {
    run_backward(grad1, grad2, mode, 1.0, upstream.data());
  }

 private:
  template <class View1, class View2>
  void check_args(const View1& img1, const View2& img2) const {
    check_ssim_image_view<ExecutionSpace, View1>();
    check_same_kind<View1, View2>();
    static_assert(int(View1::rank()) == Rank, "kssim::SSIM: the images' rank differs from the object's Rank");
    static_assert(std::is_same_v<ValueType, impl::value_type_of<View1>>, "kssim::SSIM: image value type mismatch");
    impl::require_extents("img1", img1, extents_);
    impl::require_extents("img2", img2, extents_);
  }

  template <class Grad>
  impl::OutputArray<OutputType> gradient_array(const char* name, const Grad& grad) const {
    check_ssim_output_view<ExecutionSpace, Grad, ValueType>();
    static_assert(int(Grad::rank()) == Rank, "kssim::SSIM: gradient rank differs from the object's Rank");
    static_assert(std::is_same_v<OutputType, typename Grad::value_type>,
                  "kssim::SSIM: gradients must hold the object's OutputType");
    if (impl::is_empty_view(grad)) return {};
    impl::require_extents(name, grad, extents_);
    return impl::as_rank5<impl::OutputArray<OutputType>>(grad);
  }

  template <class Grad1, class Grad2>
  void run_backward(const Grad1& grad1, const Grad2& grad2, Accumulate mode, double scale,
                    const double* upstream) {
    if (!has_forward_) throw std::logic_error("kssim::SSIM: backward() called before forward()");
    plan_.backward(exec_, x_, y_, gradient_array("grad1", grad1), gradient_array("grad2", grad2), scale, upstream,
                   mode == Accumulate::Yes);
  }

  ExecutionSpace exec_;
  std::array<int, Rank> extents_;
  impl::SlabPlan<ExecutionSpace, T, ValueType, OutputType> plan_;
  impl::InputArray<ValueType> x_, y_;
  bool has_forward_ = false;
};

}  // namespace kssim
