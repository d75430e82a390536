// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The binding's cache of kssim::SSIM objects, one per ProblemKey (shape, dtype, options, gradients,
// device and stream), so that a training step allocates no workspace after its first.
//
// The operators are pure functions of their arguments: ssim_backward(grad, img1, img2) could always run the
// forward stages again. It skips them when the workspace's last forward() read the same tensor contents, as
// PyTorch tracks them (InputStamp): then the partial derivatives that forward() left in the workspace are
// the ones wanted. Anything else (another forward of the same shape in between, a recomputed input) just
// runs the forward stages again, so correctness never rests on the order of the calls.

#include "Bridge.hpp"
#include "StreamOrder.hpp"

#include <ATen/Tensor.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace kssim::torch_binding {

// The identity of a tensor's contents: the same live storage (a weak reference, so an address freed and
// reused by another tensor never matches), the same view of it, and the same version counter (PyTorch
// increments it on every in-place write).
class InputStamp {
 public:
  InputStamp() = default;
  explicit InputStamp(const at::Tensor& t);
  bool matches(const at::Tensor& t) const;

 private:
  std::optional<c10::weak_intrusive_ptr<c10::StorageImpl>> storage_;
  const void* data_ = nullptr;
  std::vector<std::int64_t> sizes_, strides_;
  std::int64_t version_ = -1;
};

struct CacheEntry {
  std::unique_ptr<Workspace> workspace;
  void* home_stream = nullptr;  // the cudaStream_t its kernels run on (StreamOrder.hpp); null on the host
  std::unique_ptr<StreamEvents> events;  // made on the first call from another stream
  // A CUDA workspace made on the legacy default stream: the stream it moves to if a CUDA graph capture calls
  // it, whose Kokkos instance and events exist from its first call on (TorchOps.cpp, entry_for).
  void* capture_home = nullptr;
  // One double of the workspace's (upstream_slot), as a 0-dim tensor made once (from_blob asks the driver):
  // an incoming gradient the kernels cannot read in place (16-bit, integer), converted.
  at::Tensor upstream;
  InputStamp img1, img2, mask;  // inputs of the workspace's last forward(), when it prepared gradients
  std::uint64_t last_use = 0;
};

class WorkspaceCache {
 public:
  // Entries kept; the least recently used one is released beyond this (KSSIM_TORCH_CACHE_SIZE, default 8).
  static std::size_t capacity();

  // The entry for `key`, created (workspace allocated, its kernels on `stream`) on first use. Call with
  // mutex() held.
  CacheEntry& entry(const ProblemKey& key, const at::TensorOptions& device_options, void* stream);
  bool contains(const ProblemKey& key) const { return entries_.count(key) != 0; }
  void clear();
  std::size_t size() const { return entries_.size(); }
  std::uint64_t created() const { return created_; }  // workspaces allocated so far
  // Backward passes that had to run the forward stages again (their partial derivatives were not there).
  std::uint64_t recomputed() const { return recomputed_; }
  void count_recomputation() { ++recomputed_; }

  std::mutex& mutex() { return mutex_; }
  static WorkspaceCache& instance();

 private:
  std::map<ProblemKey, CacheEntry> entries_;
  std::uint64_t clock_ = 0, created_ = 0, recomputed_ = 0;
  std::mutex mutex_;
};

}  // namespace kssim::torch_binding
