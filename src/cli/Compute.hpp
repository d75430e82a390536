// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The Kokkos side of `kssim compare`: initialises Kokkos, copies the host arrays to the default execution
// space, runs kssim, and copies the results back. Nothing here touches files or the command line.

#include "io/Array.hpp"

#include <kssim/Options.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kssim::cli {

enum class Metric { Ssim, MsSsim };

struct ComputeRequest {
  const io::Array* a = nullptr;  // both of extents `extents` in C order and of the same dtype
  const io::Array* b = nullptr;
  std::vector<int> extents;      // (N, C, H, W) or (N, C, D, H, W)
  Metric metric = Metric::Ssim;  // MS-SSIM: pytorch-msssim's five scales (kssim/MSSSIM.hpp); no map
  // Masked SSIM (kssim/MaskedSSIM.hpp): a mask of A's dtype and extents but 1 or C channels, values in [0, 1].
  // It must stay the same object for the whole session (it is copied to the device once, with A).
  const io::Array* mask = nullptr;
  MaskMode mask_mode = MaskMode::Weights;
  bool want_map = false;
  bool want_per_image = false;
  bool want_per_channel = false;
  bool want_grad_a = false;
  bool want_grad_b = false;
  int repeat = 0;                // timed runs after the first (which doubles as the warm-up); 0: no timing
};

struct Timing {
  int repeat = 0;
  double median_s = 0;
  double min_s = 0;
};

struct ComputeResult {
  std::string backend;                    // Kokkos::DefaultExecutionSpace::name()
  double mean = 0;
  std::optional<io::Array> map;           // (N, C, Ho, Wo) or (N, C, Do, Ho, Wo)
  std::vector<double> per_image;          // N values when requested
  std::vector<double> per_channel;        // N x C values (n-major) when requested
  std::optional<io::Array> grad_a, grad_b;  // shaped like `extents`
  std::optional<Timing> timing;
};

// The name of the execution space that compute() runs on; needs no initialised Kokkos.
const char* backend_name();

// The map's extents for images of `extents` (rank 4 or 5) under `options`.
std::vector<int> map_extents(const std::vector<int>& extents, const Options& options);

// Kokkos, initialised (warnings off) for the session's lifetime, and the state kept between requests: when
// consecutive requests share the same A (same Array object) and extents, A is copied to the device once and
// one kssim::SSIM object (its workspace allocated once) serves them all: `kssim compare REF D1 D2 ...`.
class ComputeSession {
 public:
  explicit ComputeSession(const Options& options);
  ~ComputeSession();
  ComputeSession(const ComputeSession&) = delete;
  ComputeSession& operator=(const ComputeSession&) = delete;

  // Runs one request. The caller validates first; kssim's own std::invalid_argument is passed through.
  ComputeResult compute(const ComputeRequest& request);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace kssim::cli
