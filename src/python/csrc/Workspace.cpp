// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Workspace of Bridge.hpp: one kssim::SSIM object (kssim::L1SSIMLoss for the fused loss, kssim::MSSSIM,
// kssim::MaskedSSIM) on unmanaged, strided Views of PyTorch's memory.
// Tensors are never copied: their data pointers and strides become LayoutStride Views, so non-contiguous
// and channels-last tensors are read where they are.

#include "Bridge.hpp"
#include "KokkosRuntime.hpp"

#include <kssim/L1SSIMLoss.hpp>
#include <kssim/MaskedSSIM.hpp>
#include <kssim/MSSSIM.hpp>
#include <kssim/SSIM.hpp>
#include <kssim/impl/core/Launch.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kssim::torch_binding {
namespace {

using HostSpace = Kokkos::DefaultHostExecutionSpace;  // CPU tensors

template <class T, int Rank>
using ArrayOf = std::conditional_t<Rank == 4, T****, T*****>;

// A Strided as an unmanaged rank-Rank LayoutStride View of T (const T for the images) in memory space Mem.
template <class T, int Rank, class Mem>
Kokkos::View<ArrayOf<T, Rank>, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> view_of(
    const Strided& s) {
  using View = Kokkos::View<ArrayOf<T, Rank>, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if (s.data == nullptr) return View();
  if (s.rank != Rank) throw std::invalid_argument("kssim: internal error: tensor rank differs from the workspace's");
  Kokkos::LayoutStride layout;
  for (int i = 0; i < Rank; ++i) {
    layout.dimension[i] = std::size_t(s.extents[i]);
    layout.stride[i] = std::size_t(s.strides[i]);
  }
  return View(static_cast<T*>(s.data), layout);
}

// The result of a forward() in the images' dtype T, where the caller wants it: the mean, or per image the
// mean of its C slice sums (in order). Each value is rounded once from double (16-bit types through float,
// as PyTorch's conversion of a double). Pointers and PODs only (impl/core/KernelArrays.hpp's rule).
template <class T>
struct WriteResult {
  const double* mean = nullptr;
  const double* slice_sums = nullptr;  // N * C, n major; per image only
  T* out = nullptr;
  int channels = 1;
  double count = 1;  // map pixels per image, for the per-image means
  bool per_image = false;

  KOKKOS_INLINE_FUNCTION void operator()(int n) const {
    double v;
    if (per_image) {
      double sum = 0;
      for (int c = 0; c < channels; ++c) sum += slice_sums[std::size_t(n) * channels + c];
      v = sum / count;
    } else {
      v = *mean;
    }
    if constexpr (is_16bit_storage_v<T>)
      out[n] = T(float(v));
    else
      out[n] = T(v);
  }
};

// Runs a functor of `count` indices: on the host in place, after settle() (no Kokkos dispatch: a few values),
// on a GPU as a kernel on the workspace's stream, ordered after the kernels before it.
template <class Exec, class Functor>
void run_small(const Exec& exec, const char* name, int count, const Functor& f) {
  if constexpr (std::is_same_v<Exec, HostSpace>) {
    for (int i = 0; i < count; ++i) f(i);
  } else {
    impl::launch(name, Kokkos::RangePolicy<Exec>(exec, 0, count), f);
  }
}

// Loss: SSIM<Exec, T, Rank>, L1SSIMLoss<Exec, T, Rank>, MSSSIM<Exec, T, Rank> or MaskedSSIM<Exec, T, Rank>.
template <class Exec, class T, int Rank, class Loss>
class SsimWorkspace final : public Workspace {
  using Mem = typename Exec::memory_space;
  static constexpr bool l1 = std::is_same_v<Loss, L1SSIMLoss<Exec, T, Rank>>;
  static constexpr bool ms = std::is_same_v<Loss, MSSSIM<Exec, T, Rank>>;
  static constexpr bool masked = std::is_same_v<Loss, MaskedSSIM<Exec, T, Rank>>;

 public:
  SsimWorkspace(const Exec& exec, const ProblemKey& key)
      : exec_(exec),
        loss_(make_loss(exec, key)),
        upstream_(Kokkos::view_alloc(exec, "kssim::torch::upstream")),
        images_(int(key.extents[0])),
        channels_(key.extents[1]),
        map_pixels_(map_pixels(key)) {}
  // Kernels still queued on the stream may use the workspace (Kokkos' own free also waits, as it may not).
  ~SsimWorkspace() override { exec_.fence("kssim::torch: release a workspace"); }

  void forward(const Strided& img1, const Strided& img2, const Strided& mask, void* result,
               bool per_image) override {
    const auto x = view_of<const T, Rank, Mem>(img1);
    const auto y = view_of<const T, Rank, Mem>(img2);
    if (masked && mask.data == nullptr) throw std::invalid_argument("kssim: internal error: masked SSIM without a mask");
    // A float mean straight from the kernel that computes it: no write_result kernel after it (one launch
    // less per forward on a GPU).
    float* value_float = nullptr;
    if constexpr (std::is_same_v<T, float>)
      if (!per_image) value_float = static_cast<float*>(result);
    if constexpr (masked) {
      const auto m = view_of<const T, Rank, Mem>(mask);
      if (value_float)
        loss_.forward_into(x, y, m, value_float);
      else
        loss_.forward(x, y, m);
    } else {
      if (value_float)
        loss_.forward_into(x, y, value_float);
      else
        loss_.forward(x, y);
    }
    settle();
    if (value_float) return;
    if (result == nullptr) return;
    WriteResult<T> w;
    w.mean = loss_.value().data();
    w.out = static_cast<T*>(result);
    if (per_image) {
      w.per_image = true;
      w.channels = int(channels_);
      if constexpr (l1 || masked) {
        throw std::invalid_argument("kssim: internal error: this workspace has no per-image values");
      } else if constexpr (ms) {
        w.slice_sums = loss_.per_channel_values().data();  // each slice's MS-SSIM: average them
        w.count = double(channels_);
      } else {
        w.slice_sums = loss_.slice_sums().data();
        w.count = double(channels_ * map_pixels_);
      }
    }
    run_small(exec_, "kssim::torch::write_result", per_image ? images_ : 1, w);
  }
  double* upstream_slot() override { return upstream_.data(); }

  void move_to_stream(void* stream) override {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
      exec_ = cuda_instance(stream);
      loss_.set_execution_space_instance(exec_);
      return;
    }
#endif
    (void)stream;
    throw std::logic_error("kssim: internal error: only CUDA workspaces move between streams");
  }

  void backward(const void* upstream, Dtype upstream_dtype, const Strided& grad1, const Strided& grad2) override {
    const auto g1 = view_of<T, Rank, Mem>(grad1);
    const auto g2 = view_of<T, Rank, Mem>(grad2);
    // The kernels read a float32 or float64 factor where it is (impl/core/UpstreamFactor.hpp): no kernel
    // converts it first.
    if (upstream && upstream_dtype == Dtype::Float32)
      loss_.backward(Kokkos::View<const float, Mem>(static_cast<const float*>(upstream)), g1, g2);
    else if (upstream && upstream_dtype == Dtype::Float64)
      loss_.backward(Kokkos::View<const double, Mem>(static_cast<const double*>(upstream)), g1, g2);
    else if (upstream)
      throw std::invalid_argument("kssim: internal error: an upstream factor is float32 or float64");
    else
      loss_.backward(g1, g2);
    settle();
  }

 private:
  static std::array<int, Rank> extents(const ProblemKey& key) {
    std::array<int, Rank> e{};
    for (int i = 0; i < Rank; ++i) e[i] = int(key.extents[i]);
    return e;
  }
  // Map pixels per (n, c) slice.
  static std::int64_t map_pixels(const ProblemKey& key) {
    std::int64_t count = 1;
    for (int i = 2; i < Rank; ++i)
      count *= key.padding == Padding::Valid ? key.extents[i] - key.window_size + 1 : key.extents[i];
    return count;
  }
  static Loss make_loss(const Exec& exec, const ProblemKey& key) {
    if constexpr (l1) {
      return Loss(exec, extents(key), L1SSIMLossOptions{key.options(), key.l1_weight}, gradients(key));
    } else if constexpr (ms) {
      MSSSIMOptions o;
      o.ssim = key.options();
      o.weights = key.ms_weights;
      return Loss(exec, extents(key), o, gradients(key));
    } else if constexpr (masked) {
      return Loss(exec, extents(key), key.normalized ? MaskMode::Normalized : MaskMode::Weights, key.options(),
                  gradients(key));
    } else {
      return Loss(exec, extents(key), key.options(), gradients(key));
    }
  }
  static Gradients gradients(const ProblemKey& key) {
    return key.grad1 ? (key.grad2 ? Gradients::Both : Gradients::Image1)
                     : (key.grad2 ? Gradients::Image2 : Gradients::None);
  }
  // Host results must be complete when the operator returns (PyTorch's CPU ops are synchronous); device
  // work stays ordered on the stream, with no synchronisation.
  void settle() const {
    if constexpr (std::is_same_v<Exec, HostSpace>) exec_.fence("kssim::torch: host results");
  }

  Exec exec_;
  Loss loss_;
  Kokkos::View<double, Mem> upstream_;
  int images_;
  std::int64_t channels_, map_pixels_;
};

// The 16-bit storage type of tensors of float16 (Half) or bfloat16 (!Half) on Exec: Kokkos' where it has one
// (GPU builds; its bits are IEEE binary16 / bfloat16, as PyTorch's), else the host compiler's on the host;
// void where this build has none.
template <class Exec, class S>
inline constexpr bool usable_v =
    is_16bit_storage_v<S> && (!impl::is_host_16bit_v<S> || !impl::is_gpu_space_v<Exec>);
template <class Exec, bool Half>
using Storage16 =
    std::conditional_t<usable_v<Exec, std::conditional_t<Half, kokkos_half_t, kokkos_bhalf_t>>,
                       std::conditional_t<Half, kokkos_half_t, kokkos_bhalf_t>,
                       std::conditional_t<usable_v<Exec, std::conditional_t<Half, host_float16_t, host_bfloat16_t>>,
                                          std::conditional_t<Half, host_float16_t, host_bfloat16_t>, void>>;

template <class Exec, class T, int Rank>
std::unique_ptr<Workspace> make_for_loss(const Exec& exec, const ProblemKey& key) {
  if (key.metric == Metric::Masked)
    return std::make_unique<SsimWorkspace<Exec, T, Rank, MaskedSSIM<Exec, T, Rank>>>(exec, key);
  if (key.metric == Metric::L1Loss)
    return std::make_unique<SsimWorkspace<Exec, T, Rank, L1SSIMLoss<Exec, T, Rank>>>(exec, key);
  if (key.metric == Metric::MsSsim)
    return std::make_unique<SsimWorkspace<Exec, T, Rank, MSSSIM<Exec, T, Rank>>>(exec, key);
  return std::make_unique<SsimWorkspace<Exec, T, Rank, SSIM<Exec, T, Rank>>>(exec, key);
}

template <class Exec, class T>
std::unique_ptr<Workspace> make_for_rank(const Exec& exec, const ProblemKey& key) {
  if (key.rank == 4) return make_for_loss<Exec, T, 4>(exec, key);
  if (key.rank == 5) return make_for_loss<Exec, T, 5>(exec, key);
  throw std::invalid_argument("kssim: images must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W)");
}

template <class Exec, bool Half>
std::unique_ptr<Workspace> make_16bit(const Exec& exec, const ProblemKey& key) {
  using S = Storage16<Exec, Half>;
  if constexpr (std::is_void_v<S>)
    throw std::invalid_argument(std::string("kssim: this build has no ") + (Half ? "float16" : "bfloat16") +
                                " type for " + (impl::is_gpu_space_v<Exec> ? "CUDA" : "CPU") +
                                " tensors (Kokkos defines half_t / bhalf_t only with a GPU backend, and the host "
                                "compiler has no _Float16 / __bf16): convert the tensors to float32");
  else
    return make_for_rank<Exec, S>(exec, key);
}

template <class Exec>
std::unique_ptr<Workspace> make_on(const Exec& exec, const ProblemKey& key) {
  switch (key.dtype) {
    case Dtype::Float32: return make_for_rank<Exec, float>(exec, key);
    case Dtype::Float16: return make_16bit<Exec, true>(exec, key);
    case Dtype::BFloat16: return make_16bit<Exec, false>(exec, key);
    default: return make_for_rank<Exec, double>(exec, key);
  }
}

}  // namespace

void prepare_stream(void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  cuda_instance(stream);
#else
  (void)stream;
#endif
}

std::unique_ptr<Workspace> make_workspace(const ProblemKey& key, void* stream) {
  if (key.device == Device::Host) return make_on(HostSpace(), key);
#if defined(KOKKOS_ENABLE_CUDA)
  return make_on(cuda_instance(stream), key);
#else
  throw std::invalid_argument("kssim: this build has no CUDA backend");
#endif
}

}  // namespace kssim::torch_binding
