// The Kokkos side of `kssim ssimulacra2`: one cached reference per background, the distorted images
// compared in batches against it.
#include "cli/Ssimulacra2Command.hpp"

#include <kssim/Ssimulacra2.hpp>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <limits>

namespace kssim::cli {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using HostImages = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;

static_assert(ssimulacra2_min_extent == impl::s2::min_extent);

// Distorted images compared per batch: the workspace grows with the batch (Ssimulacra2.hpp, 106 MB per
// 1080p image). GPUs take four at a time (more parallel work for small images); hosts one, which is as
// fast per image and keeps the workspace in the caches and out of the page-fault handler.
constexpr int max_batch = impl::is_gpu_space_v<Exec> ? 4 : 1;

}  // namespace

Ssimulacra2Result compute_ssimulacra2(const Ssimulacra2Request& r) {
  Ssimulacra2Result result;
  result.scores.assign(r.count, std::numeric_limits<double>::infinity());
  Kokkos::ScopeGuard kokkos(Kokkos::InitializationSettings().set_disable_warnings(true));
  result.backend = Exec::name();
  Exec exec;
  const std::size_t plane = std::size_t(3) * r.h * r.w;
  for (float bg : r.backgrounds) {
    HostImages href(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::s2_ref"), 1, 3, r.h, r.w);
    impl::s2::advise_huge_pages(href);
    r.reference(bg, href.data());
    const auto dref = Kokkos::create_mirror_view_and_copy(Mem(), href);
    Ssimulacra2Options opts;
    opts.check_values = false;  // decoded PNG/PNM samples are in [0, 1] by construction
    Ssimulacra2Reference<Exec> cached(exec, dref, 0, opts);
    for (std::size_t first = 0; first < r.count; first += max_batch) {
      const int count = int(std::min<std::size_t>(max_batch, r.count - first));
      HostImages hd(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::s2_dist"), count, 3, r.h, r.w);
      impl::s2::advise_huge_pages(hd);
      for (int n = 0; n < count; ++n) r.distorted(first + n, bg, hd.data() + n * plane);
      const auto dd = Kokkos::create_mirror_view_and_copy(Mem(), hd);
      Kokkos::View<double*, Mem> s("kssim_cli::s2_scores", count);
      cached.compare(exec, dd, s);
      const auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
      for (int n = 0; n < count; ++n) result.scores[first + n] = std::min(result.scores[first + n], hs(n));
    }
  }
  return result;
}

}  // namespace kssim::cli
