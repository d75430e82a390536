// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Ssimulacra2Scorer of Bridge.hpp: one kssim::Ssimulacra2Reference on unmanaged, strided Views of
// PyTorch's float32 memory (its kernels read any positive strides). Kokkos side of the binding: no PyTorch.

#include "Bridge.hpp"
#include "KokkosRuntime.hpp"

#include <kssim/Ssimulacra2.hpp>

#include <Kokkos_Core.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace kssim::torch_binding {
namespace {

template <class Exec>
class Scorer final : public Ssimulacra2Scorer {
  using Mem = typename Exec::memory_space;
  using Images = Kokkos::View<const float****, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

 public:
  explicit Scorer(const Exec& exec) : exec_(exec) {}
  // Kernels still queued on the stream may use the reference's memory.
  ~Scorer() override { exec_.fence("kssim::torch: release an SSIMULACRA2 reference"); }

  void set_reference(const Strided& reference) override {
    const Images ref = images(reference);
    if (ref_)
      ref_->set_reference(exec_, ref);
    else
      ref_.emplace(exec_, ref);
    settle();
  }

  void compare(const Strided& distorted, double* scores) override {
    if (!ref_) throw std::invalid_argument("kssim: internal error: ssimulacra2 without a reference");
    const Images d = images(distorted);
    ref_->compare(exec_, d, Kokkos::View<double*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(scores, d.extent(0)));
    settle();
  }

 private:
  static Images images(const Strided& s) {
    if (s.rank != 4) throw std::invalid_argument("kssim: internal error: ssimulacra2 takes (N, 3, H, W) tensors");
    Kokkos::LayoutStride layout;
    for (int i = 0; i < 4; ++i) {
      layout.dimension[i] = std::size_t(s.extents[i]);
      layout.stride[i] = std::size_t(s.strides[i]);
    }
    return Images(static_cast<const float*>(s.data), layout);
  }
  // Host results must be complete when the operator returns; device work stays ordered on the stream.
  void settle() const {
    if constexpr (std::is_same_v<Exec, Kokkos::DefaultHostExecutionSpace>) exec_.fence("kssim::torch: host scores");
  }

  Exec exec_;
  std::optional<Ssimulacra2Reference<Exec>> ref_;
};

}  // namespace

std::unique_ptr<Ssimulacra2Scorer> make_ssimulacra2(Device device, void* stream) {
  if (device == Device::Host) return std::make_unique<Scorer<Kokkos::DefaultHostExecutionSpace>>(
      Kokkos::DefaultHostExecutionSpace());
#if defined(KOKKOS_ENABLE_CUDA)
  return std::make_unique<Scorer<Kokkos::Cuda>>(cuda_instance(stream));
#else
  (void)stream;
  throw std::invalid_argument("kssim: this build has no CUDA backend");
#endif
}

}  // namespace kssim::torch_binding
