// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The workspaces of the one-call functions (Functions.hpp), kept between calls. Allocating a workspace
// per call cost an allocation and, on GPUs, a synchronising free per call (cudaFree waits for the device):
// a loop of kssim::ssim(exec, a, b, mean_view) was neither allocation-free nor asynchronous. Each
// (execution space type, value type; for 16-bit images also their storage and output types) keeps its most
// recently used plans (capacity below), keyed by the execution space instance, the problem's extents, the
// options, the gradients wanted and whether the plan computes the fused loss's L1 term (L1Ssim.hpp); a hit reuses
// the plan, whose kernels run in stream order on that instance, so back-to-back calls cannot overlap on
// its memory. The plans are released by kssim::free_workspaces() and before Kokkos::finalize().

#include <kssim/Options.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/stages/MapBlock.hpp>
#include <kssim/impl/ssim/Plan.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace kssim::impl {

// Plans kept per (execution space type, value type): a few shapes alternating in a loop (images and their
// crops, several resolutions) hit, and the memory held stays bounded (each plan holds up to ~12 copies of
// its input for gradients, Plan.hpp).
inline constexpr int plan_cache_capacity = 4;

inline bool same_problem(const Geometry& a, const Geometry& b) {
  return a.n == b.n && a.c == b.c && a.d == b.d && a.h == b.h && a.w == b.w && a.window == b.window &&
         a.pad_w == b.pad_w && a.pad_h == b.pad_h && a.pad_d == b.pad_d && a.od == b.od &&
         a.oh == b.oh && a.ow == b.ow && a.volumetric == b.volumetric;
}
// Every option but the workspace budget, which only decides whether a problem is split: a plan is a whole
// problem, whatever the budget it was made under.
inline bool same_options(Options a, Options b) {
  a.max_workspace_bytes = b.max_workspace_bytes = 0;
  return a == b;
}

// Every cache's clear(), for kssim::free_workspaces().
struct PlanCacheRegistry {
  std::mutex mutex;
  std::vector<std::function<void()>> clears;
  static PlanCacheRegistry& get() {
    static PlanCacheRegistry r;
    return r;
  }
  void clear_all() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& c : clears) c();
  }
};

template <class ExecSpace, class T, class S = T, class O = S>
class PlanCache {
 public:
  using PlanPtr = std::shared_ptr<const Plan<ExecSpace, T, SsimTerm, S, O>>;

  static PlanCache& get() {
    static PlanCache* cache = [] {
      auto* c = new PlanCache;  // never destroyed: its plans are released before Kokkos::finalize
      Kokkos::push_finalize_hook([c] { c->clear(); });
      auto& r = PlanCacheRegistry::get();
      std::lock_guard<std::mutex> lock(r.mutex);
      r.clears.push_back([c] { c->clear(); });
      return c;
    }();
    return *cache;
  }

  PlanPtr plan(const ExecSpace& exec, const Geometry& g, const Options& opts, PartialPlanes wanted, WithL1 l1) {
    const std::uint64_t instance = instance_of(exec);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->instance == instance && same_problem(it->g, g) && same_options(it->opts, opts) &&
            it->wanted.image1 == wanted.image1 && it->wanted.image2 == wanted.image2 && it->l1 == l1) {
          entries_.splice(entries_.begin(), entries_, it);  // most recently used first
          return entries_.front().plan;
        }
      }
    }
    // A miss builds outside the lock (the constructor launches kernels and may take a while).
    auto plan = std::make_shared<const Plan<ExecSpace, T, SsimTerm, S, O>>(exec, g, opts, wanted, true, l1);
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_front(Entry{instance, g, opts, wanted, l1, plan});
    if (int(entries_.size()) > plan_cache_capacity) entries_.pop_back();  // a caller may still hold it
    return plan;
  }

  void clear() {
    std::list<Entry> old;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      old.swap(entries_);
    }
  }

  int size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return int(entries_.size());
  }

 private:
  struct Entry {
    std::uint64_t instance;
    Geometry g;
    Options opts;
    PartialPlanes wanted;
    WithL1 l1;
    PlanPtr plan;
  };

  // Which instance of the execution space (a stream on GPUs): plans are never shared across instances,
  // whose kernels may run concurrently.
  static std::uint64_t instance_of(const ExecSpace& exec) {
    if constexpr (requires { exec.impl_instance_id(); })
      return std::uint64_t(exec.impl_instance_id());
    else
      return 0;
  }

  std::mutex mutex_;
  std::list<Entry> entries_;
};

template <class ExecSpace, class T, class S = T, class O = S>
std::shared_ptr<const Plan<ExecSpace, T, SsimTerm, S, O>> cached_plan(const ExecSpace& exec, const Geometry& g,
                                                                       const Options& opts, PartialPlanes wanted,
                                                                       WithL1 l1 = WithL1::No) {
  return PlanCache<ExecSpace, T, S, O>::get().plan(exec, g, opts, wanted, l1);
}

}  // namespace kssim::impl

namespace kssim {

// Releases the workspaces the one-call functions keep between calls (impl/ssim/PlanCache.hpp). Call it to
// return their memory early; kssim also releases them before Kokkos::finalize().
inline void free_workspaces() { impl::PlanCacheRegistry::get().clear_all(); }

}  // namespace kssim
