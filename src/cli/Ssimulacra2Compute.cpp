// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Kokkos side of `kssim ssimulacra2`: one cached reference per background, the distorted images
// compared in batches against it.
#include "cli/Ssimulacra2Command.hpp"

#include <kssim/Ssimulacra2.hpp>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <limits>
#include <optional>

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
  // Every buffer is allocated once and reused for every batch and background: fresh memory is expensive
  // (the kernel clears each new page; on the development VM first touches ran at about 0.5 GB/s).
  const int batch = int(std::min<std::size_t>(max_batch, r.count));
  // With one image per batch, the distorted images are staged where the reference was (it is not read
  // again once its pyramid is built).
  HostImages href(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::s2_images"), 1, 3, r.h, r.w);
  HostImages hd = batch == 1 ? href
                             : HostImages(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::s2_dist"), batch,
                                          3, r.h, r.w);
  impl::s2::advise_huge_pages(href);  // as the library's workspace
  if (batch > 1) impl::s2::advise_huge_pages(hd);
  auto dref = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, Mem(), href);  // href itself on hosts
  auto dd = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, Mem(), hd);
  Kokkos::View<double*, Mem> s("kssim_cli::s2_scores", batch);
  auto hs = Kokkos::create_mirror_view(s);
  Ssimulacra2Options opts;
  opts.check_values = false;  // decoded PNG/PNM samples are in [0, 1] by construction
  std::optional<Ssimulacra2Reference<Exec>> cached;
  for (float bg : r.backgrounds) {
    r.reference(bg, href.data());
    Kokkos::deep_copy(exec, dref, href);  // nothing to copy on hosts
    if (!cached)
      cached.emplace(exec, dref, 0, opts);
    else
      cached->set_reference(exec, dref);
    exec.fence("kssim_cli: ssimulacra2 reference built");  // before its staging buffer is reused
    for (std::size_t first = 0; first < r.count; first += std::size_t(batch)) {
      const int count = int(std::min<std::size_t>(std::size_t(batch), r.count - first));
      for (int n = 0; n < count; ++n) r.distorted(first + n, bg, hd.data() + n * plane);
      Kokkos::deep_copy(exec, dd, hd);
      const auto images = Kokkos::make_pair(0, count);
      cached->compare(exec, Kokkos::subview(dd, images, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL),
                      Kokkos::subview(s, images));
      Kokkos::deep_copy(exec, hs, s);
      exec.fence("kssim_cli: ssimulacra2 scores");
      for (int n = 0; n < count; ++n) result.scores[first + n] = std::min(result.scores[first + n], hs(n));
    }
  }
  return result;
}

}  // namespace kssim::cli
