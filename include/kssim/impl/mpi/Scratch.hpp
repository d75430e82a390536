// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Buffers that a distributed call keeps for the next one (the extended blocks, their gradients and the
// message buffers). Allocating them per call cost more than the halo exchange itself on the CPU (a 160^3
// float field: fresh pages for ~70 MB each call) and would synchronise the device on every call on GPUs.
// Per (execution space type, value type): one buffer per slot, grown when a call needs more, released by
// kssim::free_workspaces() and before Kokkos::finalize(). Calls hold the lock for their whole duration
// (they are collective and end with a fence, so no kernel outlives it).

#include <kssim/impl/ssim/PlanCache.hpp>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <mutex>

namespace kssim::impl::mpi {

enum class ScratchSlot { X, Y, Grad1, Grad2, Outgoing, Incoming, Count };

template <class ExecSpace, class T>
class Scratch {
 public:
  using Mem = typename ExecSpace::memory_space;

  static Scratch& get() {
    static Scratch* s = [] {
      auto* c = new Scratch;  // never destroyed: its buffers are released before Kokkos::finalize
      Kokkos::push_finalize_hook([c] { c->clear(); });
      auto& r = PlanCacheRegistry::get();
      std::lock_guard<std::mutex> lock(r.mutex);
      r.clears.push_back([c] { c->clear(); });
      return c;
    }();
    return *s;
  }

  std::mutex& call_mutex() { return call_mutex_; }

  // At least `count` elements in `slot`, contents undefined.
  T* buffer(const ExecSpace& exec, ScratchSlot slot, std::size_t count) {
    auto& v = buffers_[int(slot)];
    if (v.extent(0) < count) {
      v = {};  // free first: the old and the new buffer need not both fit
      v = Kokkos::View<T*, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kssim::mpi::scratch"), count);
    }
    return v.data();
  }

  void clear() {
    std::lock_guard<std::mutex> lock(call_mutex_);
    for (auto& v : buffers_) v = {};
  }

 private:
  std::mutex call_mutex_;
  std::array<Kokkos::View<T*, Mem>, int(ScratchSlot::Count)> buffers_;
};

}  // namespace kssim::impl::mpi
