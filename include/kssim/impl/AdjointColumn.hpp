#pragma once
// Backward stage 1, the adjoint column (and, for volumes, adjoint depth) pass. The adjoint of a
// correlation over the valid (or zero-padded) extent is a full correlation with the reversed window:
// every input position gathers the map positions whose windows covered it, so no two threads write the
// same element and no atomics are needed. K planes of partial derivatives go in, K planes come out on
// the longer axis.

#include <kssim/impl/AxisTile.hpp>
#include <kssim/impl/GaussianWindow.hpp>
#include <kssim/impl/Views.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace, class T, int K>
struct AdjointColumn {
  using Mem = typename ExecSpace::memory_space;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T***, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int tile_len = Tiles<ExecSpace, T>::axis_len;
  static constexpr int tile_inner = Tiles<ExecSpace, T>::axis_inner;
  static constexpr int scratch_level = Tiles<ExecSpace, T>::scratch_level;
  static constexpr int chunk = Tiles<ExecSpace, T>::chunk;
  static constexpr int rows = Tiles<ExecSpace, T>::axis_rows;

  Planes<T, Mem> in;   // K planes on the map side of the forward pass
  Planes<T, Mem> out;  // K planes on the input side of the forward pass
  GaussianWindow<T> window;  // already reversed
  AxisPass a;                // already the adjoint pass

  std::size_t scratch_bytes() const { return Scratch::shmem_size(K, tile_len + window.size - 1, tile_inner); }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const AxisTilePosition p = axis_tile_position(a, team.league_rank(), tile_len, tile_inner);
    const T zero[K] = {};  // partial derivatives vanish outside the map
    Scratch tile(team.team_scratch(int(scratch_level)), K, tile_len + window.size - 1, tile_inner);
    stage_axis_tile<K>(team, tile, in, a, p, tile_len + window.size - 1, tile_inner, zero);
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile_len / rows), [&](int jg) {
      const int j0 = jg * rows;
      if (p.l0 + j0 >= a.len_out) return;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, tile_inner / chunk), [&](int ic) {
        const int i0 = ic * chunk;
        if (p.i0 + i0 >= a.inner) return;
        T acc[K][rows][chunk];
        correlate_axis_tile(tile, window, j0, i0, acc);
        const int nu = p.i0 + i0 + chunk <= a.inner ? chunk : a.inner - p.i0 - i0;
        for (int q = 0; q < rows && p.l0 + j0 + q < a.len_out; ++q) {
          const std::size_t idx = a.out_index(p.outer, p.l0 + j0 + q, p.i0 + i0);
          for (int k = 0; k < K; ++k)
            for (int u = 0; u < nu; ++u) out(k, idx + u) = acc[k][q][u];
        }
      });
    });
  }
};

template <class ExecSpace, class T, int K>
void adjoint_column(const ExecSpace& exec, const Options& opts, const AdjointColumn<ExecSpace, T, K>& k) {
  using A = AdjointColumn<ExecSpace, T, K>;
  auto policy = make_team_policy(exec, k.a.league_size(), A::tile_len, A::tile_inner, Tiles<ExecSpace, T>::scratch_level, k.scratch_bytes(), opts, k,
                                 Kokkos::ParallelForTag{});
  Kokkos::parallel_for("kssim::adjoint_column", policy, k);
}

}  // namespace kssim::impl
