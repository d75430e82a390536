// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "WorkspaceCache.hpp"

#include <ATen/ATen.h>

#include <cstdlib>
#include <string>

namespace kssim::torch_binding {

InputStamp::InputStamp(const at::Tensor& t) {
  if (t.is_inference()) return;  // inference tensors have no version counter: never matches
  storage_ = t.storage().getWeakStorageImpl();
  data_ = t.const_data_ptr();
  sizes_ = t.sizes().vec();
  strides_ = t.strides().vec();
  version_ = t._version();
}

bool InputStamp::matches(const at::Tensor& t) const {
  if (!storage_ || t.is_inference() || !t.has_storage()) return false;
  const auto alive = storage_->lock();
  return alive && alive.get() == t.storage().unsafeGetStorageImpl() && data_ == t.const_data_ptr() &&
         t.sizes().equals(sizes_) && t.strides().equals(strides_) && version_ == t._version();
}

std::size_t WorkspaceCache::capacity() {
  static const std::size_t n = [] {
    const char* s = std::getenv("KSSIM_TORCH_CACHE_SIZE");
    const long v = s ? std::strtol(s, nullptr, 10) : 8;
    return std::size_t(v > 0 ? v : 1);
  }();
  return n;
}

CacheEntry& WorkspaceCache::entry(const ProblemKey& key, const at::TensorOptions& device_options, void* stream) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= capacity()) {  // release the least recently used workspace
      auto oldest = entries_.begin();
      for (auto e = entries_.begin(); e != entries_.end(); ++e)
        if (e->second.last_use < oldest->second.last_use) oldest = e;
      entries_.erase(oldest);
    }
    CacheEntry fresh;
    fresh.workspace = make_workspace(key, stream);  // may throw (bad shape or options): nothing is inserted then
    fresh.home_stream = stream;
    // The workspace's own memory: a tensor the cache keeps must not come from PyTorch's allocator, whose CUDA
    // graph pools (torch.compile's cudagraph trees warm up in one) refuse untracked survivors.
    fresh.upstream = at::from_blob(fresh.workspace->upstream_slot(), {}, device_options.dtype(at::kDouble));
    it = entries_.emplace(key, std::move(fresh)).first;
    ++created_;
  }
  it->second.last_use = ++clock_;
  return it->second;
}

void WorkspaceCache::clear() { entries_.clear(); }

WorkspaceCache& WorkspaceCache::instance() {
  static auto* cache = new WorkspaceCache;  // never destroyed at exit: emptied when Kokkos is finalised
  return *cache;
}

}  // namespace kssim::torch_binding
