// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The mean of the map, bitwise reproducible: every team of the map pass leaves the sum of its map values
// in tile_sums; then one kernel with a team per (n, c) slice sums each slice's tile sums, and the team
// that finishes last (an atomic counter) sums the slices and writes the total and the mean. Which team
// that is depends on timing, but every sum runs in a fixed order (OrderedSum: indices only, not the team's
// shape), so the result does not. The counter returns to zero for the next call. The fused L1 + SSIM loss (L1Term.hpp) adds a
// second set of tile sums, of |x - y|, summed alongside in the same fixed order, and the loss; masked SSIM
// adds the map weights' sums (WeightSums), and the mean is the weighted one.
// (One team for everything cost 10 us at 1920x1080 and 38 us at 3840x2160 on a GPU: its threads walk
// the slices one after the other. Counting in the map pass itself, to save this kernel's launch, made
// every map-pass team wait for a memory fence and an atomic: 13 us more in the map pass at 1920x1080. On
// one-wave problems the launch costs more than that wait, and the fused forward's last team does this
// kernel's work itself: FusedForward.hpp, fused_forward_finishes.)

#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Tuning.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// The L1 sums of the fused L1 + SSIM loss (null tile_sums: none): one double per team of the kernel that
// reads the images, slice by slice, like MapSums'. Then loss = weight * l1_total / count + (1 - weight) *
// (1 - mean).
struct L1Sums {
  double* tile_sums = nullptr;
  double* image_sums = nullptr;  // per (n, c) slice
  double* total = nullptr;
  double* loss = nullptr;
  int tiles_per_image = 0;
  double count = 1;   // input pixels, for the mean
  double weight = 0;  // of the L1 term (set per forward call)
};

// The weights' sums of masked SSIM (null tile_sums: none): one double per tile of the map pass, like the map's,
// summed alongside them in the same order. The mean is then the weighted one, sum (w map) / sum w, and NaN when
// the mask held a value outside [0, 1] (MaskCheck's flag, MaskCheck.hpp) or there is no weight.
struct WeightSums {
  double* tile_sums = nullptr;
  double* image_sums = nullptr;      // per (n, c) slice
  double* total = nullptr;
  double* inverse = nullptr;         // 1 / total, or 0 without weight: the backward's factor
  unsigned* invalid = nullptr;       // MaskCheck's flag: read and reset by the sum's last team
  unsigned* invalid_seen = nullptr;  // the flag's value at the last forward
};

// The arrays of the mean, as kernels see them (plain pointers: KernelArrays.hpp's rule).
// "Never a plausible number from work that did not happen": tile sums read NaN until a map pass writes
// them (sum_map sets them back to NaN once summed), and the map pass sets the total, mean and slice sums to
// NaN before sum_map overwrites them. So if the map pass did not run, or sum_map did not, the mean reads
// NaN instead of 0 or a previous call's value.
struct MapSums {
  double* tile_sums = nullptr;   // one per team of the map pass (the fused forward: per tile), slice by slice
  unsigned* done = nullptr;      // slices summed so far; zero between calls
  double* image_sums = nullptr;  // per (n, c) slice
  double* total = nullptr;
  double* mean = nullptr;
  int images = 0;
  int tiles_per_image = 1;
  double map_size = 1;  // map pixels, for the mean
  L1Sums l1;
  WeightSums weights;
  // Optional, per call: the value rounded to float here too (the training objects' forward_into): the mean, or
  // with L1 sums the fused loss.
  float* value_float = nullptr;

  // Called by one thread of the map pass before any sum_map of this call.
  KOKKOS_INLINE_FUNCTION void invalidate_results() const {
    const double nan = Kokkos::Experimental::quiet_NaN_v<double>;
    *total = nan;
    *mean = nan;
    for (int i = 0; i < images; ++i) image_sums[i] = nan;
    if (l1.tile_sums) {
      *l1.total = nan;
      *l1.loss = nan;
      for (int i = 0; i < images; ++i) l1.image_sums[i] = nan;
    }
    if (weights.tile_sums) {
      *weights.total = nan;
      *weights.inverse = nan;
      for (int i = 0; i < images; ++i) weights.image_sums[i] = nan;
    }
  }
};

// One tile's sum of map values inside a kernel that owns several tiles (the fused forward's chains), in a
// fixed order whatever the team's shape: each work item of the map pass leaves its sum in a scratch slot;
// then groups of `group` consecutive slots are summed (sum_groups), then the groups in order (total). The
// two steps run in phases of the next tile that are separated by barriers the kernel has anyway, so a
// tile's sum costs no barrier of its own. (It replaced a Kokkos team reduction per tile: the fused forward
// went from 370 to 322 instructions per map pixel, 98 to 88 us at 1x3x1080x1920, ncu.)
struct TileItemSums {
  static constexpr int group = 8;
  double* items = nullptr;   // one per work item of the map pass
  double* groups = nullptr;  // one per `group` items
  int count = 0;             // work items per tile

  KOKKOS_INLINE_FUNCTION static int group_count(int count) { return (count + group - 1) / group; }
  static std::size_t bytes(int count) { return sizeof(double) * (count + group_count(count) + 1); }
  template <class Team>
  KOKKOS_INLINE_FUNCTION static TileItemSums allocate(const Team& team, int level, int count) {
    const std::size_t size = sizeof(double) * (count + group_count(count));
    auto* p = static_cast<double*>(team.team_scratch(level).get_shmem_aligned(size, std::ptrdiff_t(sizeof(double))));
    return {p, p + count, count};
  }
  // After a barrier that follows the map pass: the group sums.
  template <class Team>
  KOKKOS_INLINE_FUNCTION void sum_groups(const Team& team) const {
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, group_count(count)), [&](int q) {
      double s = 0;
      for (int u = 0; u < group; ++u)
        if (group * q + u < count) s += items[group * q + u];
      groups[q] = s;
    });
  }
  // After a barrier that follows sum_groups (one thread): the tile's sum.
  KOKKOS_INLINE_FUNCTION double total() const {
    double s = 0;
    for (int q = 0; q < group_count(count); ++q) s += groups[q];
    return s;
  }
};

// Every array of s to NaN, with a kssim kernel: Kokkos' own deep_copy(view, value) dispatches a functor
// that holds a View, and with the mdspan-based View under nvcc that one wrote out of bounds (KernelArrays.hpp).
template <class ExecSpace>
void invalidate_all(const ExecSpace& exec, const MapSums& s) {
  const int l1_tiles = s.l1.tile_sums ? s.images * s.l1.tiles_per_image : 0;
  const int count = Kokkos::max(Kokkos::max(s.images * s.tiles_per_image, s.images), l1_tiles);
  launch("kssim::invalidate_sums", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), KOKKOS_LAMBDA(const int i) {
    if (i < s.images * s.tiles_per_image) {
      s.tile_sums[i] = Kokkos::Experimental::quiet_NaN_v<double>;
      if (s.weights.tile_sums) s.weights.tile_sums[i] = Kokkos::Experimental::quiet_NaN_v<double>;
    }
    if (i < l1_tiles) s.l1.tile_sums[i] = Kokkos::Experimental::quiet_NaN_v<double>;
    if (i == 0) s.invalidate_results();
  });
}

// The memory behind MapSums. l1_tiles_per_image > 0 adds the L1 sums of the fused loss over l1_count pixels.
template <class Mem>
struct MapSumStore {
  Kokkos::View<double*, Mem> tile_sums;
  Kokkos::View<unsigned*, Mem> done;
  Kokkos::View<double*, Mem> image_sums;
  Kokkos::View<double, Mem> total, mean;
  Kokkos::View<double*, Mem> l1_tile_sums, l1_image_sums;
  Kokkos::View<double, Mem> l1_total, loss;
  MapSums arrays;

  template <class ExecSpace>
  MapSumStore(const ExecSpace& exec, int images, int tiles_per_image, double map_size, int l1_tiles_per_image = 0,
              double l1_count = 1)
      : tile_sums(Kokkos::view_alloc(exec, "kssim::tile_sums"), std::size_t(images) * tiles_per_image),
        done(Kokkos::view_alloc(exec, "kssim::done"), 1),
        image_sums(Kokkos::view_alloc(exec, "kssim::image_sums"), images),
        total(Kokkos::view_alloc(exec, "kssim::total")),
        mean(Kokkos::view_alloc(exec, "kssim::mean")),
        arrays{tile_sums.data(), done.data(), image_sums.data(), total.data(), mean.data(), images, tiles_per_image,
               map_size, L1Sums{}} {
    if (l1_tiles_per_image > 0) {
      l1_tile_sums = Kokkos::View<double*, Mem>(Kokkos::view_alloc(exec, "kssim::l1_tile_sums"),
                                                std::size_t(images) * l1_tiles_per_image);
      l1_image_sums = Kokkos::View<double*, Mem>(Kokkos::view_alloc(exec, "kssim::l1_image_sums"), images);
      l1_total = Kokkos::View<double, Mem>(Kokkos::view_alloc(exec, "kssim::l1_total"));
      loss = Kokkos::View<double, Mem>(Kokkos::view_alloc(exec, "kssim::loss"));
      arrays.l1 = L1Sums{l1_tile_sums.data(), l1_image_sums.data(), l1_total.data(), loss.data(), l1_tiles_per_image,
                         l1_count, 0.0};
    }
    invalidate_all(exec, arrays);
  }
  MapSumStore() = default;

  // Adds the weights' sums (masked SSIM): the mean becomes the weighted one. Before any forward.
  template <class ExecSpace>
  void add_weights(const ExecSpace& exec) {
    weight_tile_sums = Kokkos::View<double*, Mem>(Kokkos::view_alloc(exec, "kssim::weight_tile_sums"), tile_sums.size());
    weight_image_sums = Kokkos::View<double*, Mem>(Kokkos::view_alloc(exec, "kssim::weight_image_sums"),
                                                   image_sums.size());
    weight_total = Kokkos::View<double, Mem>(Kokkos::view_alloc(exec, "kssim::weight_total"));
    inverse_weight = Kokkos::View<double, Mem>(Kokkos::view_alloc(exec, "kssim::inverse_weight"));
    mask_invalid = Kokkos::View<unsigned, Mem>(Kokkos::view_alloc(exec, "kssim::mask_invalid"));
    mask_invalid_seen = Kokkos::View<unsigned, Mem>(Kokkos::view_alloc(exec, "kssim::mask_invalid_seen"));
    arrays.weights = WeightSums{weight_tile_sums.data(), weight_image_sums.data(), weight_total.data(),
                                inverse_weight.data(), mask_invalid.data(), mask_invalid_seen.data()};
    invalidate_all(exec, arrays);
  }
  Kokkos::View<double*, Mem> weight_tile_sums, weight_image_sums;
  Kokkos::View<double, Mem> weight_total, inverse_weight;
  Kokkos::View<unsigned, Mem> mask_invalid, mask_invalid_seen;
};

// v[0] + v[1] + ... + v[n - 1], added in that order, from memory other teams wrote (volatile: past this
// multiprocessor's cache; atomic loads of doubles go through Kokkos' lock table on some backends, 0.5 us
// each on a GPU), by a team: chunks of `cap` values are loaded by all its threads at once into scratch,
// then added by one. (One thread loading and adding the values itself, in batches of 8, made a chain of
// dependent trips to memory: ~6 us of a 64x1x128x128 forward, ncu.) The sum in every thread.
template <class Team>
KOKKOS_INLINE_FUNCTION double team_sum_in_order(const Team& team, const volatile double* v, int n, double* scratch,
                                                int cap) {
  double sum = 0;
  for (int i0 = 0; i0 < n; i0 += cap) {
    const int m = n - i0 < cap ? n - i0 : cap;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, m), [&](int i) { scratch[i] = v[i0 + i]; });
    team.team_barrier();
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](double& s) {
          for (int i = 0; i < m; ++i) s += scratch[i];
        },
        sum);
    team.team_barrier();  // scratch is reused
  }
  return sum;
}

// Called by one thread of each team that adds to the mean, after its sums are written: counts the team done
// and says whether it is the last of `teams` (then every other team's sums are visible to it, and it adds the
// total: finish_mean). The fences order this team's sums before its count, and the others' before its reads.
KOKKOS_INLINE_FUNCTION bool count_team_done(const MapSums& s, int teams) {
  Kokkos::memory_fence();
  const bool last = Kokkos::atomic_fetch_add(s.done, 1u) == unsigned(teams - 1);
  if (last) Kokkos::memory_fence();
  return last;
}

// The fixed order in which a slice's n tile sums are added, whatever adds them (sum_map's team of any shape,
// or the fused forward's last team, FusedForward.hpp): `strands` strided sequential sums (strand p adds
// values p, p + strands, ...), then groups of 32 consecutive strands in order, then the groups in order.
// Up to 1024 strands: a slice of 16384 tiles (4096x4096) is 16 loads per strand, all strands in parallel.
struct OrderedSum {
  static constexpr int max_strands = 1024, group = 32;
  KOKKOS_INLINE_FUNCTION static int strands(int n) { return n < max_strands ? n : max_strands; }
  KOKKOS_INLINE_FUNCTION static int groups(int n) { return (strands(n) + group - 1) / group; }
  // Scratch doubles per slice.
  KOKKOS_INLINE_FUNCTION static int scratch(int n) { return strands(n) + groups(n); }
};

// Arrays of tile sums summed together (sum_slices_in_order): values[a] holds `count` slices of n values each, out[a]
// gets their sums.
template <int Arrays>
struct OrderedArrays {
  double* values[Arrays];
  double* out[Arrays];
};

// out[a][i] = the sum of slice i of values[a], v[i n .. i n + n - 1] (written by other teams: volatile loads), for
// i < count, in OrderedSum's order, by a team; then the values are set to NaN (consumed, see MapSums). Several
// arrays of the same n go through the same steps together, each strand's loads of all of them issued at once
// (each array's own order is unchanged: the same bits as one array at a time, with one chain of barriers).
// scratch: Arrays * count * OrderedSum::scratch(n) doubles of team scratch. out is written by the team's threads:
// a barrier follows before anyone reads it.
template <int Arrays, class Team>
KOKKOS_INLINE_FUNCTION void sum_slices_in_order(const Team& team, const OrderedArrays<Arrays>& a, int n, int count,
                                                double* scratch) {
  const int strands = OrderedSum::strands(n), groups = OrderedSum::groups(n), per = strands + groups;
  // A strand adds each value as it loads it: its loads in batches of 8 before their adds were no faster anywhere,
  // and 2-4% slower on the one-wave forwards, whose last team runs this (perf_tests/README.md, "Tried and rejected").
  Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count * strands), [&](int e) {
    const int i = e / strands, p = e % strands;
    double s[Arrays];
    for (int k = 0; k < Arrays; ++k) s[k] = 0;
    for (int t = p; t < n; t += strands)
      for (int k = 0; k < Arrays; ++k) s[k] += static_cast<const volatile double*>(a.values[k])[std::size_t(i) * n + t];
    for (int k = 0; k < Arrays; ++k) scratch[(k * count + i) * per + p] = s[k];
  });
  team.team_barrier();  // every value is read: mark them consumed
  for (int k = 0; k < Arrays; ++k) {  // (constant bounds: no run-time index into `a`, which would leave registers)
    double* const v = a.values[k];
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count * n),
                         [&](int e) { v[e] = Kokkos::Experimental::quiet_NaN_v<double>; });
  }
  Kokkos::parallel_for(Kokkos::TeamVectorRange(team, Arrays * count * groups), [&](int e) {
    const int slice = e / groups, q0 = e % groups * OrderedSum::group;  // slice: k * count + i
    double s = 0;
    for (int q = q0; q < q0 + OrderedSum::group && q < strands; ++q) s += scratch[slice * per + q];
    scratch[slice * per + strands + e % groups] = s;
  });
  team.team_barrier();
  for (int k = 0; k < Arrays; ++k) {
    double* const out = a.out[k];
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count), [&](int i) {
      double s = 0;
      for (int q = 0; q < groups; ++q) s += scratch[(k * count + i) * per + strands + q];
      out[i] = s;
    });
  }
}

// The last step of the mean, by the team that finished last (after a memory fence): the total and mean of the
// slice sums, in slice order (and the L1 total and the loss), and the counter back to 0. scratch: cap doubles.
template <class Team>
KOKKOS_INLINE_FUNCTION void finish_mean(const Team& team, const MapSums& s, double* scratch, int cap) {
  const double sum = team_sum_in_order(team, s.image_sums, s.images, scratch, cap);
  const double l1 = s.l1.tile_sums ? team_sum_in_order(team, s.l1.image_sums, s.images, scratch, cap) : 0.0;
  const double weight =
      s.weights.tile_sums ? team_sum_in_order(team, s.weights.image_sums, s.images, scratch, cap) : 0.0;
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    double mean = sum / s.map_size;
    if (s.weights.tile_sums) {
      const unsigned invalid = *s.weights.invalid;
      mean = invalid || !(weight > 0) ? Kokkos::Experimental::quiet_NaN_v<double> : sum / weight;
      *s.weights.total = weight;
      *s.weights.inverse = weight > 0 ? 1 / weight : 0.0;
      *s.weights.invalid_seen = invalid;
      *s.weights.invalid = 0;
    }
    *s.total = sum;
    *s.mean = mean;
    double value = mean;
    if (s.l1.tile_sums) {
      value = s.l1.weight * (l1 / s.l1.count) + (1 - s.l1.weight) * (1 - mean);
      *s.l1.total = l1;
      *s.l1.loss = value;
    }
    if (s.value_float) *s.value_float = float(value);
    *s.done = 0;
  });
}

// Slices first .. first + count - 1 of s (and of its L1 or weight sums): their tile sums added into image_sums, in
// OrderedSum's order. The weights' sums (as many per slice as the map's), or the L1 sums where they are as many,
// go through the same steps as the map's (sum_slices_in_order); L1 sums of another count follow on their own. The
// same bits as one array after the other, with one chain of loads and barriers: masked SSIM's and the fused loss's
// forwards took 0.92-0.99x the time (H100, perf_tests/README.md, "MS-SSIM and masked SSIM").
// scratch: slice_scratch_doubles(s) * count doubles.
KOKKOS_INLINE_FUNCTION bool l1_sums_with_map(const MapSums& s) {
  return s.l1.tile_sums && !s.weights.tile_sums && s.l1.tiles_per_image == s.tiles_per_image;
}
KOKKOS_INLINE_FUNCTION int slice_scratch_doubles(const MapSums& s) {
  const int map = OrderedSum::scratch(s.tiles_per_image) * (s.weights.tile_sums || l1_sums_with_map(s) ? 2 : 1);
  const int l1 = s.l1.tile_sums && !l1_sums_with_map(s) ? OrderedSum::scratch(s.l1.tiles_per_image) : 0;
  return map > l1 ? map : l1;
}
template <class Team>
KOKKOS_INLINE_FUNCTION void sum_slices(const Team& team, const MapSums& s, int first, int count, double* scratch) {
  const std::size_t map_first = std::size_t(first) * s.tiles_per_image;
  double* const map = s.tile_sums + map_first;
  double* const sums = s.image_sums + first;
  if (s.weights.tile_sums) {
    sum_slices_in_order<2>(team, {{map, s.weights.tile_sums + map_first}, {sums, s.weights.image_sums + first}},
                           s.tiles_per_image, count, scratch);
  } else if (l1_sums_with_map(s)) {
    sum_slices_in_order<2>(team, {{map, s.l1.tile_sums + map_first}, {sums, s.l1.image_sums + first}},
                           s.tiles_per_image, count, scratch);
  } else {
    sum_slices_in_order<1>(team, {{map}, {sums}}, s.tiles_per_image, count, scratch);
  }
  if (s.l1.tile_sums && !l1_sums_with_map(s)) {
    team.team_barrier();  // scratch is reused
    const std::size_t l1_first = std::size_t(first) * s.l1.tiles_per_image;
    sum_slices_in_order<1>(team, {{s.l1.tile_sums + l1_first}, {s.l1.image_sums + first}}, s.l1.tiles_per_image, count,
                           scratch);
  }
}

// Sums the tile sums of the last map pass into image_sums, total and mean (and the L1 sums into the loss): a team
// per slice, the last one to finish adding the total and mean (finish_mean). (One team summing every slice and
// finishing itself, without the done counter and its fences, took 0.97-1.01x the time, too little for a second
// kernel: perf_tests/README.md,
// "Tried and rejected".)
template <class ExecSpace>
void sum_map(const ExecSpace& exec, const MapSums& s) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  const int images = s.images, per_slice = slice_scratch_doubles(s);
  // Scratch: the slice's strands and groups, then (the finishing team) up to 1024 slice sums at a time.
  const int scratch_doubles = Kokkos::max(per_slice, Kokkos::min(images, 1024));
  const int vector = gpu_code_paths_v<ExecSpace> ? Kokkos::min(32, Policy::vector_length_max()) : 1;
  const auto body = KOKKOS_LAMBDA(const Team& team) {
    auto* scratch = static_cast<double*>(
        team.team_scratch(0).get_shmem_aligned(sizeof(double) * scratch_doubles, std::ptrdiff_t(sizeof(double))));
    sum_slices(team, s, team.league_rank(), 1, scratch);
    team.team_barrier();  // the slice's sums are written
    bool last = false;
    Kokkos::single(
        Kokkos::PerTeam(team), [&](bool& last_team) { last_team = count_team_done(s, images); }, last);
    if (last) finish_mean(team, s, scratch, scratch_doubles);
  };
  // GPUs: a thread per strand (OrderedSum), up to the team's maximum.
  const int strands = Kokkos::max(OrderedSum::strands(s.tiles_per_image),
                                  s.l1.tile_sums ? OrderedSum::strands(s.l1.tiles_per_image) : 0);
  Policy probe(exec, images, 1, vector);
  probe.set_scratch_size(0, Kokkos::PerTeam(sizeof(double) * scratch_doubles));
  const int most = probe.team_size_max(body, Kokkos::ParallelForTag());
  const int threads = gpu_code_paths_v<ExecSpace> ? Kokkos::min(most, Kokkos::max(1, strands / vector)) : 1;
  Policy policy(exec, images, threads, vector);
  policy.set_scratch_size(0, Kokkos::PerTeam(sizeof(double) * scratch_doubles));
  launch("kssim::sum_map", policy, body);
}

}  // namespace kssim::impl
