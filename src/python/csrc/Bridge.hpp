// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The seam between the two halves of the PyTorch binding:
//  - TorchOps.cpp and WorkspaceCache.cpp see ATen tensors and register the operators; no Kokkos.
//  - Workspace.cpp and KokkosRuntime.cpp run kssim's kernels on Kokkos; no PyTorch.
// Only plain types cross it. Each half is then compiled with its own world's flags (PyTorch's by the host
// compiler, the kernels by Kokkos' device compiler in CUDA builds), and neither depends on the other's
// headers or ABI.

#include <kssim/Options.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

namespace kssim::torch_binding {

enum class Device { Host, Cuda };
// Float16 and BFloat16: 16-bit storage, computed in float (kssim/impl/core/Storage.hpp).
enum class Dtype { Float32, Float64, Float16, BFloat16 };

// A tensor as the kernels see it: rank 4 (N, C, H, W) or 5 (N, C, D, H, W), extents and strides in
// elements (strides positive: size-1 axes carry any positive stride).
struct Strided {
  void* data = nullptr;
  int rank = 0;
  std::array<std::int64_t, 5> extents{};
  std::array<std::int64_t, 5> strides{};
};

// Which training object a workspace holds.
enum class Metric {
  Ssim,    // kssim::SSIM
  L1Loss,  // kssim::L1SSIMLoss (l1_weight)
  MsSsim,  // kssim::MSSSIM (ms_weights; valid padding, exact window)
  Masked   // kssim::MaskedSSIM (normalized: MaskMode::Normalized, else Weights; exact window)
};

// Everything that selects one kssim::SSIM (or kssim::L1SSIMLoss) object: the problem, where it runs, which
// gradients it prepares. Not the stream: a workspace serves every stream of its device (TorchOps.cpp orders
// its kernels after the caller's stream and the caller's stream after them).
struct ProblemKey {
  Device device = Device::Host;
  int device_index = -1;   // CUDA device, -1 on the host
  Dtype dtype = Dtype::Float32;
  int rank = 4;
  std::array<std::int64_t, 5> extents{};
  int window_size = 11;
  double sigma = 1.5, k1 = 0.01, k2 = 0.03, data_range = 1.0;
  Padding padding = Padding::Valid;  // the options operand's code, cast as it comes: kssim::validate checks it
  bool float32_window = false;  // kssim::Window::Float32: fused-ssim's and pytorch-msssim's weights and moments
  bool grad1 = false, grad2 = false;
  Metric metric = Metric::Ssim;
  double l1_weight = -1;            // Metric::L1Loss: the L1 weight, in [0, 1]
  std::vector<double> ms_weights;   // Metric::MsSsim: one exponent per scale, finest first
  bool normalized = false;          // Metric::Masked: MaskMode::Normalized (else MaskMode::Weights)

  bool l1_loss() const { return metric == Metric::L1Loss; }
  auto tied() const {
    return std::tie(device, device_index, dtype, rank, extents, window_size, sigma, k1, k2, data_range,
                    padding, float32_window, grad1, grad2, metric, l1_weight, ms_weights, normalized);
  }
  bool operator<(const ProblemKey& o) const { return tied() < o.tied(); }
  Options options() const {
    Options o;
    o.window_size = window_size;
    o.sigma = sigma;
    o.k1 = k1;
    o.k2 = k2;
    o.data_range = data_range;
    o.padding = padding;
    o.window = float32_window ? Window::Float32 : Window::Exact;
    return o;
  }
};

// One cached kssim::SSIM object (kssim::L1SSIMLoss for an l1_loss() key) with its workspace, allocated once.
// Pointers passed and returned are in the memory of the key's device; its kernels run on the stream it was
// made for (make_workspace's `stream`; host: complete when the call returns).
class Workspace {
 public:
  virtual ~Workspace() = default;
  // Mean SSIM (the L1 + SSIM loss for an l1_loss() key, MS-SSIM, masked SSIM), or with `per_image` (SSIM
  // and MS-SSIM keys) the mean of each image, N values, written in the key's dtype into `result` (memory the
  // caller owns: a fresh tensor of PyTorch's allocator, so no result aliases the workspace). Each value is
  // accumulated in double and rounded once to the dtype (16-bit dtypes through float, as PyTorch converts a
  // double); a null `result` writes none. When the key asks for gradients, also the partial derivatives that
  // backward() needs. `mask`: the mask of a Metric::Masked key ((N, 1 or C, [D,] H, W), the images' dtype),
  // empty (null data) for the others; backward() reads the mask of the last forward().
  virtual void forward(const Strided& img1, const Strided& img2, const Strided& mask, void* result,
                       bool per_image) = 0;
  // One double of the workspace's own memory for a backward() upstream factor of a dtype the kernels do not
  // read (the caller converts it there): allocated with it, outside PyTorch's allocator, so that no tensor
  // of a CUDA graph pool (torch.compile's cudagraph trees warm up in one) outlives a call.
  virtual double* upstream_slot() = 0;
  // d(upstream * mean)/d img1 and /d img2 of the last forward() into grad1 / grad2 (either may have null
  // data). `upstream` points at one value in the device's memory, of `upstream_dtype` (Float32 or Float64:
  // read where it is, e.g. in the incoming gradient tensor), or is null for 1.
  virtual void backward(const void* upstream, Dtype upstream_dtype, const Strided& grad1, const Strided& grad2) = 0;
  // Later calls run on `stream` (CUDA keys; prepare_stream() made its Kokkos instance outside any CUDA graph
  // capture). The caller orders the hand-over (StreamOrder.hpp's fork and join).
  virtual void move_to_stream(void* stream) = 0;
};

// `stream`: the cudaStream_t its kernels run on (CUDA keys), null on the host.
std::unique_ptr<Workspace> make_workspace(const ProblemKey& key, void* stream);
// Makes the Kokkos instance of `stream` (a cudaStream_t) now, so that a workspace can move there while a CUDA
// graph is being captured, when an instance cannot be made (it allocates). Nothing to do without CUDA.
void prepare_stream(void* stream);

// SSIMULACRA2 against one cached reference (kssim::Ssimulacra2Reference): images are float32 (N, 3, H, W),
// sRGB in [0, 1], any positive strides, in the memory of the device it was made for.
class Ssimulacra2Scorer {
 public:
  virtual ~Ssimulacra2Scorer() = default;
  // Image 0 of `reference` becomes the reference (its XYB pyramid and blurred statistics are computed).
  virtual void set_reference(const Strided& reference) = 0;
  // One score per distorted image ((B, 3, H, W), the reference's H and W) into `scores` (B doubles).
  virtual void compare(const Strided& distorted, double* scores) = 0;
};
std::unique_ptr<Ssimulacra2Scorer> make_ssimulacra2(Device device, void* stream);

// Initialises Kokkos on first use unless the program already did (then it is left to the program to
// finalise). `cuda_device`: the device Kokkos' CUDA backend starts on (ignored without CUDA). `release` is
// called when Kokkos is finalised, before anything of Kokkos' is torn down: it must drop every Workspace.
void ensure_kokkos(int cuda_device, void (*release)());
// Finalises Kokkos if ensure_kokkos() initialised it (at interpreter exit); otherwise only calls `release`.
void finalize_kokkos();
// Whether this build runs kernels on CUDA tensors (Kokkos with its CUDA backend).
bool has_cuda();
// "Kokkos 5.2.2, OpenMP" and the like, for error messages and the tests' logs.
const char* kokkos_description();

}  // namespace kssim::torch_binding
