// The Workspace of Bridge.hpp: one kssim::SSIM object (kssim::L1SSIMLoss for the fused loss) on unmanaged,
// strided Views of PyTorch's memory.
// Tensors are never copied: their data pointers and strides become LayoutStride Views, so non-contiguous
// and channels-last tensors are read where they are.

#include "Bridge.hpp"
#include "KernelSpaces.hpp"
#include "KokkosRuntime.hpp"

#include <kssim/L1Ssim.hpp>
#include <kssim/SSIM.hpp>

#include <Kokkos_Core.hpp>
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

// Loss: SSIM<Exec, T, Rank> or L1SSIMLoss<Exec, T, Rank>.
template <class Exec, class T, int Rank, class Loss>
class SsimWorkspace final : public Workspace {
  using Mem = typename Exec::memory_space;
  static constexpr bool l1 = std::is_same_v<Loss, L1SSIMLoss<Exec, T, Rank>>;

 public:
  SsimWorkspace(const Exec& exec, const ProblemKey& key)
      : exec_(exec),
        loss_(exec, extents(key), options(key), gradients(key)),
        upstream_(Kokkos::view_alloc(exec, "kssim::torch::upstream")) {}
  // Kernels still queued on the stream may use the workspace (Kokkos' own free also waits, as it may not).
  ~SsimWorkspace() override { exec_.fence("kssim::torch: release a workspace"); }

  void forward(const Strided& img1, const Strided& img2) override {
    loss_.forward(view_of<const T, Rank, Mem>(img1), view_of<const T, Rank, Mem>(img2));
    settle();
  }
  const double* mean() const override { return loss_.value().data(); }
  double* upstream_slot() override { return upstream_.data(); }
  const double* slice_sums() const override {
    if constexpr (l1)
      return nullptr;
    else
      return loss_.slice_sums().data();
  }

  void backward(const double* upstream, const Strided& grad1, const Strided& grad2) override {
    const auto g1 = view_of<T, Rank, Mem>(grad1);
    const auto g2 = view_of<T, Rank, Mem>(grad2);
    if (upstream)
      loss_.backward(Kokkos::View<const double, Mem>(upstream), g1, g2);
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
  static auto options(const ProblemKey& key) {
    if constexpr (l1)
      return L1SsimOptions{key.options(), key.l1_weight};
    else
      return key.options();
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
  if constexpr (is_16bit_storage_v<T>) {
    if (key.l1_loss())
      throw std::invalid_argument("kssim: the fused L1 + SSIM loss takes float32 or float64 tensors, not 16-bit ones");
  } else {
    if (key.l1_loss()) return std::make_unique<SsimWorkspace<Exec, T, Rank, L1SSIMLoss<Exec, T, Rank>>>(exec, key);
  }
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

std::unique_ptr<Workspace> make_workspace(const ProblemKey& key, void* stream) {
  if (key.device == Device::Host) return make_on(HostSpace(), key);
#if defined(KOKKOS_ENABLE_CUDA)
  return make_on(cuda_instance(stream), key);
#else
  throw std::invalid_argument("kssim: this build has no CUDA backend");
#endif
}

}  // namespace kssim::torch_binding
