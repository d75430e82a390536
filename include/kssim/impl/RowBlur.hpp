#pragma once
// Forward stage 1, the row blur: correlate both images along W with the Gaussian and write the five
// statistics planes m1 = B(x'), m2 = B(y'), e11 = B(x'^2), e22 = B(y'^2), e12 = B(x'y') of extent
// (NC, D, H, Wo). Each team stages a tile of rows plus the window's halo in scratch.

#include <kssim/impl/AxisTile.hpp>
#include <kssim/impl/GaussianWindow.hpp>
#include <kssim/impl/Geometry.hpp>
#include <kssim/impl/Tiles.hpp>
#include <kssim/impl/Views.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class ExecSpace, class T>
struct RowBlur {
  using Mem = typename ExecSpace::memory_space;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T***, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int tile_rows = Tiles<ExecSpace, T>::row_rows;
  static constexpr int tile_cols = Tiles<ExecSpace, T>::row_cols;
  static constexpr int scratch_level = Tiles<ExecSpace, T>::scratch_level;
  static constexpr int chunk = Tiles<ExecSpace, T>::chunk;

  InputView<T, Mem> x, y;
  Kokkos::View<const T* [2], Mem> shifts;
  Planes<T, Mem> stats;  // (5, NC*D*H*Wo)
  GaussianWindow<T> window;
  Geometry g;
  int col_tiles = 0;

  KOKKOS_INLINE_FUNCTION int rows() const { return g.images() * g.d * g.h; }
  int halo_cols() const { return tile_cols + window.size - 1; }
  int league_size() const { return ceil_div(rows(), tile_rows) * col_tiles; }
  std::size_t scratch_bytes() const { return Scratch::shmem_size(2, tile_rows, halo_cols()); }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const int row0 = (team.league_rank() / col_tiles) * tile_rows;
    const int col0 = (team.league_rank() % col_tiles) * tile_cols;
    const int nrows = rows(), halo = tile_cols + window.size - 1, slice_rows = g.d * g.h;
    Scratch tile(team.team_scratch(int(scratch_level)), 2, tile_rows, halo);

    // Stage recentred pixels; the zero padding outside the image becomes -shift after recentring.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile_rows), [&](int i) {
      const int r = row0 + i;
      if (r >= nrows) return;
      const int nc = r / slice_rows, n = nc / g.c, c = nc % g.c;
      const int dd = (r % slice_rows) / g.h, hh = r % g.h;
      const T s1 = shifts(nc, 0), s2 = shifts(nc, 1);
      const T* xrow = &x(n, c, dd, hh, 0);
      const T* yrow = &y(n, c, dd, hh, 0);
      const std::size_t xs = x.stride(4), ys = y.stride(4);
      if constexpr (Tiles<ExecSpace, T>::gpu) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, halo), [&](int j) {
          const int col = col0 + j - g.pad;
          const bool inside = col >= 0 && col < g.w;
          tile(0, i, j) = (inside ? xrow[col * xs] : T(0)) - s1;
          tile(1, i, j) = (inside ? yrow[col * ys] : T(0)) - s2;
        });
      } else {
        // Outside the image every pixel is 0, i.e. -shift after recentring.
        stage_row_segment(&tile(0, i, 0), xrow, xs, col0 - g.pad, halo, g.w, s1, -s1);
        stage_row_segment(&tile(1, i, 0), yrow, ys, col0 - g.pad, halo, g.w, s2, -s2);
      }
    });
    team.team_barrier();

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile_rows), [&](int i) {
      const int r = row0 + i;
      if (r >= nrows) return;
      const std::size_t base = std::size_t(r) * g.ow;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, tile_cols / chunk), [&](int jc) {
        const int j0 = jc * chunk;
        if (col0 + j0 >= g.ow) return;
        const T* xs = &tile(0, i, j0);
        const T* ys = &tile(1, i, j0);
        T m1[chunk] = {}, m2[chunk] = {}, e11[chunk] = {}, e22[chunk] = {}, e12[chunk] = {};
        for (int t = 0; t < window.size; ++t) {
          const T wt = window.weight[t];
          KSSIM_VECTORIZE
          for (int u = 0; u < chunk; ++u) {
            const T a = xs[u + t], b = ys[u + t], wa = wt * a, wb = wt * b;
            m1[u] += wa;
            m2[u] += wb;
            e11[u] += wa * a;
            e22[u] += wb * b;
            e12[u] += wa * b;
          }
        }
        const int nu = col0 + j0 + chunk <= g.ow ? chunk : g.ow - col0 - j0;
        const std::size_t idx = base + col0 + j0;
        store_chunk<chunk>(&stats(0, idx), m1, nu);
        store_chunk<chunk>(&stats(1, idx), m2, nu);
        store_chunk<chunk>(&stats(2, idx), e11, nu);
        store_chunk<chunk>(&stats(3, idx), e22, nu);
        store_chunk<chunk>(&stats(4, idx), e12, nu);
      });
    });
  }
};

template <class ExecSpace, class T>
void row_blur(const ExecSpace& exec, const Options& opts, RowBlur<ExecSpace, T> k) {
  k.col_tiles = ceil_div(k.g.ow, k.tile_cols);
  auto policy = make_team_policy(exec, k.league_size(), k.tile_rows, k.tile_cols, Tiles<ExecSpace, T>::scratch_level, k.scratch_bytes(), opts, k,
                                 Kokkos::ParallelForTag{});
  Kokkos::parallel_for("kssim::row_blur", policy, k);
}

}  // namespace kssim::impl
