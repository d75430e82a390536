// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// MS-SSIM on the four-stage pipeline: one Plan per scale (the contrast-structure term at every scale but
// the last, SSIM at the last; with Window::Float32 each of the raw window's moments, Plan::forward), the
// images average-pooled between scales (AveragePool.hpp), and the product of the scales' clamped means per
// slice (MsSsimProduct.hpp). Allocates only in its constructor.
//
// Backward, coarsest scale first: scale k's gradient with respect to its (pooled) images is its Plan's
// backward, scaled per slice by d MS-SSIM / d t_k, plus the adjoint pooling of scale k+1's gradient. The
// finest scale writes into (or adds to) the caller's gradients; the coarser ones into workspace.
//
// Images of a 16-bit type S run every scale in T: the finest scale's images are converted once per forward,
// and 16-bit gradients (O) are computed in T and rounded once at the end (FinestScale.hpp).

#include <kssim/MSSSIMOptions.hpp>
#include <kssim/impl/msssim/AveragePool.hpp>
#include <kssim/impl/msssim/FinestScale.hpp>
#include <kssim/impl/msssim/MsSsimProduct.hpp>
#include <kssim/impl/ssim/Plan.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kssim::impl {

// Extents (N, C, D, H, W) of a geometry's images.
inline std::array<int, 5> image_extents(const Geometry& g) { return {g.n, g.c, g.d, g.h, g.w}; }

// The geometry of images of extents e (D = 1 for 2D images).
inline Geometry geometry_of(const std::array<int, 5>& e, bool volumetric, const Options& opts) {
  if (volumetric) return make_geometry<5>(e, opts);
  return make_geometry<4>({e[0], e[1], e[3], e[4]}, opts);
}

// Throws std::invalid_argument when an image of geometry g is too small for MS-SSIM's scales.
inline void require_ms_ssim_extents(const Geometry& g, const MSSSIMOptions& o) {
  const int smallest = std::min(std::min(g.h, g.w), g.volumetric ? g.d : g.h);
  if (smallest < o.min_extent())
    throw std::invalid_argument("kssim: ms_ssim with " + std::to_string(o.scales()) + " scales and window_size " +
                                std::to_string(o.ssim.window_size) + " needs every spatial extent > " +
                                std::to_string(o.min_extent() - 1) + " (window_size - 1) * 2^(scales - 1), got " +
                                std::to_string(smallest));
}

template <class ExecSpace, class T, class S = T, class O = T>
class MsSsimPlan {
 public:
  using Mem = typename ExecSpace::memory_space;
  using Buffer = Kokkos::View<T*****, Kokkos::LayoutRight, Mem>;
  // 16-bit images (S) and gradients (O): converted to and from T at the finest scale (FinestScale.hpp).
  static constexpr bool converts_images = !std::is_same_v<S, T>, converts_gradients = !std::is_same_v<O, T>;

  // `g` is the finest scale's geometry (make_geometry of the images with o.ssim).
  MsSsimPlan(const ExecSpace& exec, const Geometry& g, const MSSSIMOptions& o, PartialPlanes wanted)
      : g_(g), wanted_(wanted), scales_(o.scales()) {
    validate(o);
    require_ms_ssim_extents(g, o);
    std::array<int, 5> e = image_extents(g);
    if constexpr (converts_images) {
      x0_ = buffer(exec, "kssim::ms_ssim_x0", e);
      y0_ = buffer(exec, "kssim::ms_ssim_y0", e);
    }
    if constexpr (converts_gradients) {
      if (wanted.image1) g1_0_ = buffer(exec, "kssim::ms_ssim_grad1_0", e);
      if (wanted.image2) g2_0_ = buffer(exec, "kssim::ms_ssim_grad2_0", e);
    }
    for (int k = 0; k < scales_; ++k) {
      if (k > 0) {
        pads_.push_back(PoolPadding::of(e, g.volumetric));
        e = pooled_extents(e, g.volumetric);
        x_.push_back(buffer(exec, "kssim::ms_ssim_x", e));
        y_.push_back(buffer(exec, "kssim::ms_ssim_y", e));
        g1_.push_back(wanted.image1 ? buffer(exec, "kssim::ms_ssim_grad1", e) : Buffer{});
        g2_.push_back(wanted.image2 ? buffer(exec, "kssim::ms_ssim_grad2", e) : Buffer{});
      }
      const Geometry gk = geometry_of(e, g.volumetric, o.ssim);
      if (k + 1 < scales_)
        cs_.emplace_back(exec, gk, o.ssim, wanted);
      else
        last_.emplace(exec, gk, o.ssim, wanted);
    }
    per_slice_ = Kokkos::View<double*, Mem>(Kokkos::view_alloc(exec, "kssim::ms_ssim_per_slice"), g.images());
    factors_ = Kokkos::View<double*, Mem>(Kokkos::view_alloc(exec, "kssim::ms_ssim_factors"),
                                          std::size_t(scales_) * g.images());
    result_ = MapSumStore<Mem>(exec, 1, g.images(), double(g.images()));
    product_.scales = scales_;
    product_.images = g.images();
    for (int k = 0; k < scales_; ++k) {
      product_.scale_sums[k] = k + 1 < scales_ ? cs_[k].image_sums().data() : last_->image_sums().data();
      product_.map_pixels[k] = double(scale_geometry(k).map_size_per_image());
      product_.weights[k] = o.weights[k];
    }
    product_.per_slice = per_slice_.data();
    product_.factors = factors_.data();
    product_.tile_sums = result_.arrays.tile_sums;
  }

  const Geometry& geometry() const { return g_; }
  PartialPlanes wanted() const { return wanted_; }
  int scales() const { return scales_; }
  // From the last forward(): MS-SSIM averaged over slices, and per (n, c) slice.
  Kokkos::View<const double, Mem> mean() const { return result_.mean; }
  Kokkos::View<const double*, Mem> per_slice() const { return per_slice_; }

  // `value_float`, if not null, gets the mean rounded to float too (by the kernel that computes it).
  void forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
               float* value_float = nullptr) const;

  // The gradients of the mean (GradientTargets, PassArguments.hpp) for the images of the last forward().
  void backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                const GradientTargets<O>& out) const;

 private:
  static Buffer buffer(const ExecSpace& exec, const char* label, const std::array<int, 5>& e) {
    return Buffer(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), e[0], e[1], e[2], e[3],
                  e[4]);
  }
  const Geometry& scale_geometry(int k) const { return k + 1 < scales_ ? cs_[k].geometry() : last_->geometry(); }
  // The images of scale k: the caller's at k = 0 (16-bit: their conversion, from the last forward()), the pooled
  // workspace after.
  std::pair<InputArray<T>, InputArray<T>> images_at(int k, const InputArray<S>& x, const InputArray<S>& y) const {
    if (k > 0) return {as_rank5<InputArray<T>>(x_[k - 1]), as_rank5<InputArray<T>>(y_[k - 1])};
    if constexpr (converts_images)
      return {as_rank5<InputArray<T>>(x0_), as_rank5<InputArray<T>>(y0_)};
    else
      return {x, y};
  }
  // Every scale's backward, coarsest first, into targets of T.
  void backward_scales(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                       const GradientTargets<T>& out) const;

  Geometry g_;
  PartialPlanes wanted_;
  int scales_ = 0;
  Buffer x0_, y0_, g1_0_, g2_0_;             // the finest scale in T where S or O is not T
  std::vector<PoolPadding> pads_;            // pads_[k]: pooling scale k -> k + 1
  std::vector<Buffer> x_, y_, g1_, g2_;      // [k - 1]: scale k >= 1
  std::vector<Plan<ExecSpace, T, ContrastStructureTerm>> cs_;  // scales 0 .. scales - 2
  std::optional<Plan<ExecSpace, T>> last_;                      // the last scale: SSIM
  Kokkos::View<double*, Mem> per_slice_, factors_;
  MapSumStore<Mem> result_;
  MsSsimProduct product_;
};

// Defined outside the class so that kssim/Instantiate.hpp can compile them (and their kernels) once.
template <class ExecSpace, class T, class S, class O>
void MsSsimPlan<ExecSpace, T, S, O>::forward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                              float* value_float) const {
  if constexpr (converts_images)
    convert_arrays(exec, ConvertArrays<ExecSpace, T, S, T>{x, y, as_rank5<OutputArray<T>>(x0_),
                                                           as_rank5<OutputArray<T>>(y0_)});
  for (int k = 0; k < scales_; ++k) {
    if (k > 0) {
      const auto [px, py] = images_at(k - 1, x, y);
      average_pool(exec, AveragePool<ExecSpace, T>{px, py, as_rank5<OutputArray<T>>(x_[k - 1]),
                                        as_rank5<OutputArray<T>>(y_[k - 1]), pads_[k - 1]});
    }
    const auto [sx, sy] = images_at(k, x, y);
    if (k + 1 < scales_)
      cs_[k].forward(exec, sx, sy, {});
    else
      last_->forward(exec, sx, sy, {});
  }
  MapSums result = result_.arrays;
  result.value_float = value_float;
  ms_ssim_product(exec, product_, result);
}

template <class ExecSpace, class T, class S, class O>
void MsSsimPlan<ExecSpace, T, S, O>::backward(const ExecSpace& exec, const InputArray<S>& x, const InputArray<S>& y,
                                              const GradientTargets<O>& out) const {
  const bool want1 = out.grad1.data() != nullptr, want2 = out.grad2.data() != nullptr;
  if (!want1 && !want2) return;
  if ((want1 && !wanted_.image1) || (want2 && !wanted_.image2))
    throw std::invalid_argument("kssim: backward asked for a gradient this object was not set up to compute");
  if constexpr (converts_gradients) {
    const OutputArray<T> t1 = want1 ? as_rank5<OutputArray<T>>(g1_0_) : OutputArray<T>{};
    const OutputArray<T> t2 = want2 ? as_rank5<OutputArray<T>>(g2_0_) : OutputArray<T>{};
    backward_scales(exec, x, y, {t1, t2, out.scale, out.upstream, false});
    convert_arrays(exec, ConvertArrays<ExecSpace, T, T, O>{as_rank5<InputArray<T>>(g1_0_), as_rank5<InputArray<T>>(g2_0_),
                                                           out.grad1, out.grad2, out.accumulate});
  } else {
    backward_scales(exec, x, y, out);
  }
}

template <class ExecSpace, class T, class S, class O>
void MsSsimPlan<ExecSpace, T, S, O>::backward_scales(const ExecSpace& exec, const InputArray<S>& x,
                                                     const InputArray<S>& y, const GradientTargets<T>& out) const {
  const bool want1 = out.grad1.data() != nullptr, want2 = out.grad2.data() != nullptr;
  for (int k = scales_ - 1; k >= 0; --k) {
    OutputArray<T> t1 = !want1 ? OutputArray<T>{} : k == 0 ? out.grad1 : as_rank5<OutputArray<T>>(g1_[k - 1]);
    OutputArray<T> t2 = !want2 ? OutputArray<T>{} : k == 0 ? out.grad2 : as_rank5<OutputArray<T>>(g2_[k - 1]);
    bool add = k == 0 && out.accumulate;
    if (k + 1 < scales_) {  // the coarser scale's gradient, pooled back to this one
      AveragePoolAdjoint<ExecSpace, T> adjoint{};
      if (want1) adjoint.grad1_in = as_rank5<InputArray<T>>(g1_[k]);
      if (want2) adjoint.grad2_in = as_rank5<InputArray<T>>(g2_[k]);
      adjoint.grad1_out = t1;
      adjoint.grad2_out = t2;
      adjoint.pad = pads_[k];
      adjoint.accumulate = add;
      average_pool_adjoint(exec, adjoint);
      add = true;
    }
    const auto [sx, sy] = images_at(k, x, y);
    const GradientTargets<T> scale_out{t1, t2, out.scale, out.upstream, add};
    const BackwardTerms terms{.slice_factors = factors_.data() + std::size_t(k) * g_.images()};
    if (k + 1 < scales_)
      cs_[k].backward(exec, sx, sy, scale_out, terms);
    else
      last_->backward(exec, sx, sy, scale_out, terms);
  }
}

}  // namespace kssim::impl
