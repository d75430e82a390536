#pragma once
// The mean of the map, in a fixed order so that it is bitwise reproducible: the map pass leaves one
// double per team; one team per (n, c) slice sums its slice's tiles, then one team sums the slices.
// No atomics: the order of every addition depends only on the shape and the team size.

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace>
void reduce_tile_sums(const ExecSpace& exec, const Kokkos::View<const double*, typename ExecSpace::memory_space>& tile_sums,
                      int tiles_per_image, const Kokkos::View<double*, typename ExecSpace::memory_space>& image_sums,
                      const Kokkos::View<double, typename ExecSpace::memory_space>& total) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  const int images = int(image_sums.extent(0));
  Kokkos::parallel_for(
      "kssim::sum_per_image", Policy(exec, images, Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
        const int nc = team.league_rank();
        double s = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, tiles_per_image),
            [&](int t, double& acc) { acc += tile_sums(std::size_t(nc) * tiles_per_image + t); }, s);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { image_sums(nc) = s; });
      });
  Kokkos::parallel_for(
      "kssim::sum_images", Policy(exec, 1, Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
        double s = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, images), [&](int i, double& acc) { acc += image_sums(i); }, s);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { total() = s; });
      });
}

}  // namespace kssim::impl
