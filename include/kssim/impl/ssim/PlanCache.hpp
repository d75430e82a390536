// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The workspaces of the one-call functions of every metric (SSIM.hpp, MSSSIM.hpp, MaskedSSIM.hpp, L1SSIMLoss.hpp),
// kept between calls. Allocating a workspace per call cost an allocation and, on GPUs, a synchronising free per
// call (cudaFree waits for the device): a loop of kssim::ssim(exec, a, b, mean_view) was neither
// allocation-free nor asynchronous. Each kind of plan (for each execution space type and value type) keeps its
// most recently used plans (capacity below), keyed by the execution space instance and what defines the plan:
// the problem's extents, the options, the gradients wanted (and for SSIM whether the plan computes the fused
// loss's L1 term, for masks the mode). A hit reuses the plan, whose kernels run in stream order on that
// instance, so back-to-back calls cannot overlap on its memory. The plans are released by
// kssim::free_workspaces() and before Kokkos::finalize().

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
         a.oh == b.oh && a.ow == b.ow && a.volumetric == b.volumetric && a.padding == b.padding;
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

// The most recently used plans of one kind (Plan: the plan class; Key: what makes two problems the same plan,
// with ==) for one execution space type, keyed by the execution space instance and the Key. make() builds a
// plan on a miss.
template <class ExecSpace, class PlanT, class Key>
class PlanCache {
 public:
  using PlanPtr = std::shared_ptr<const PlanT>;

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

  template <class Make>
  PlanPtr plan(const ExecSpace& exec, const Key& key, Make&& make) {
    const std::uint64_t instance = instance_of(exec);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->instance == instance && it->key == key) {
          entries_.splice(entries_.begin(), entries_, it);  // most recently used first
          return entries_.front().plan;
        }
      }
    }
    // A miss builds outside the lock (the constructor launches kernels and may take a while).
    PlanPtr plan = make();
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_front(Entry{instance, key, plan});
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
    Key key;
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

// An SSIM plan's key: the problem, the options, the gradients it keeps partials for, and whether it computes
// the fused loss's L1 term.
struct SsimPlanKey {
  Geometry g;
  Options opts;
  PartialPlanes wanted;
  WithL1 l1;
  friend bool operator==(const SsimPlanKey& a, const SsimPlanKey& b) {
    return same_problem(a.g, b.g) && same_options(a.opts, b.opts) && a.wanted.image1 == b.wanted.image1 &&
           a.wanted.image2 == b.wanted.image2 && a.l1 == b.l1;
  }
};

template <class ExecSpace, class T, class S = T, class O = S>
std::shared_ptr<const Plan<ExecSpace, T, SsimTerm, S, O>> cached_plan(const ExecSpace& exec, const Geometry& g,
                                                                       const Options& opts, PartialPlanes wanted,
                                                                       WithL1 l1 = WithL1::No) {
  using P = Plan<ExecSpace, T, SsimTerm, S, O>;
  return PlanCache<ExecSpace, P, SsimPlanKey>::get().plan(exec, SsimPlanKey{g, opts, wanted, l1}, [&] {
    return std::make_shared<const P>(exec, g, opts, wanted, true, l1);
  });
}

}  // namespace kssim::impl

namespace kssim {

// Releases the workspaces the one-call functions keep between calls (impl/ssim/PlanCache.hpp). Call it to
// return their memory early; kssim also releases them before Kokkos::finalize().
inline void free_workspaces() { impl::PlanCacheRegistry::get().clear_all(); }

}  // namespace kssim
