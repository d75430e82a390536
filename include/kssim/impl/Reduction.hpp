#pragma once
// The mean of the map, in a fixed order so that it is bitwise reproducible: the map pass leaves one
// double per team; one kernel of one team sums them per (n, c) slice, then sums the slices in order and
// writes the total and the mean. No atomics: the order of every addition depends only on the shape, the
// team size and the vector length.

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace>
void reduce_tile_sums(const ExecSpace& exec, const Kokkos::View<const double*, typename ExecSpace::memory_space>& tile_sums,
                      int tiles_per_image, const Kokkos::View<double*, typename ExecSpace::memory_space>& image_sums,
                      const Kokkos::View<double, typename ExecSpace::memory_space>& total,
                      const Kokkos::View<double, typename ExecSpace::memory_space>& mean, double map_size) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  const int images = int(image_sums.extent(0));
  const int vector = Kokkos::min(32, Policy::vector_length_max());
  // One launch instead of three (per-slice sums, total, mean): on GPUs each tiny kernel costs a few
  // microseconds of launch latency, which adds up next to ~100 us stages.
  Kokkos::parallel_for(
      "kssim::sum_tiles", Policy(exec, 1, Kokkos::AUTO, vector), KOKKOS_LAMBDA(const Team& team) {
        if (images >= team.team_size()) {
          // Many slices: each team thread sums whole slices with its vector lanes.
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, images), [&](int nc) {
            double s = 0;
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(team, tiles_per_image),
                [&](int t, double& acc) { acc += tile_sums(std::size_t(nc) * tiles_per_image + t); }, s);
            Kokkos::single(Kokkos::PerThread(team), [&]() { image_sums(nc) = s; });
          });
        } else {
          // Few slices (large images): the whole team sums one slice after the other.
          for (int nc = 0; nc < images; ++nc) {
            double s = 0;
            Kokkos::parallel_reduce(
                Kokkos::TeamVectorRange(team, tiles_per_image),
                [&](int t, double& acc) { acc += tile_sums(std::size_t(nc) * tiles_per_image + t); }, s);
            Kokkos::single(Kokkos::PerTeam(team), [&]() { image_sums(nc) = s; });
          }
        }
        team.team_barrier();
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          double s = 0;
          for (int nc = 0; nc < images; ++nc) s += image_sums(nc);
          total() = s;
          mean() = s / map_size;
        });
      });
}

}  // namespace kssim::impl
