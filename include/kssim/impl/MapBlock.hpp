#pragma once
// The last step of every forward schedule: the SSIM map of a block of Rows x Chunk outputs from their
// window moments (LocalMoments.hpp), with the partial derivatives the backward pass needs (MapFormula.hpp).
// The formula runs branch-free over whole chunks (vectorised on hosts); only the stores stop at the edge.

#include <kssim/impl/AxisTile.hpp>
#include <kssim/impl/KernelArrays.hpp>
#include <kssim/impl/LocalMoments.hpp>
#include <kssim/impl/MapTerms.hpp>
#include <kssim/impl/Tiles.hpp>
#include <kssim/impl/Vectorize.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

namespace kssim::impl {

// Which partial-derivative planes a forward pass writes, in this order: d_var, d_cov, then d_m1 and/or
// d_m2 when the gradient of image 1 and/or image 2 is wanted.
struct PartialPlanes {
  bool image1 = false, image2 = false;
  KOKKOS_INLINE_FUNCTION int count() const { return 2 + int(image1) + int(image2); }
  KOKKOS_INLINE_FUNCTION bool any() const { return image1 || image2; }
};

// Evaluates the map (Term: SSIM's, or MS-SSIM's contrast-structure term, MapTerms.hpp) of the block whose moments are m (rows_valid rows and nu columns of it inside the map),
// stores the partial derivatives of row q at partials(k, first_partial(q) + u) when any are wanted, hands
// each row's values to store_map(q, values), and returns the sum of the map over the valid outputs.
template <int Rows, int Chunk, class Term = SsimTerm, class T, class FirstPartial, class StoreMap>
KOKKOS_FORCEINLINE_FUNCTION double evaluate_map_block(const T (&m)[moment_planes][Rows][Chunk], int rows_valid, int nu,
                                                      T s1, T s2, T c1, T c2, const PartialPlanes& wanted,
                                                      const PlaneArray<T>& partials, const FirstPartial& first_partial,
                                                      const StoreMap& store_map) {
  double sum = 0;
  for (int q = 0; q < Rows; ++q) {
    if (q >= rows_valid) continue;
    T value[Chunk];
    if (wanted.any()) {
      T d_var[Chunk], d_cov[Chunk], d_m1[Chunk], d_m2[Chunk];
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u) {
        const MapAndPartials<T> r = Term::value_and_partials(m[0][q][u], m[1][q][u], m[2][q][u], m[3][q][u], s1, s2, c1, c2);
        value[u] = r.map;
        d_var[u] = r.d_var;
        d_cov[u] = r.d_cov;
        d_m1[u] = r.d_m1;
        d_m2[u] = r.d_m2;
      }
      const std::size_t idx = first_partial(q);
      store_chunk<Chunk>(&partials(0, idx), d_var, nu);
      store_chunk<Chunk>(&partials(1, idx), d_cov, nu);
      if (wanted.image1) store_chunk<Chunk>(&partials(2, idx), d_m1, nu);
      if (wanted.image2) store_chunk<Chunk>(&partials(wanted.image1 ? 3 : 2, idx), d_m2, nu);
    } else {
      KSSIM_VECTORIZE
      for (int u = 0; u < Chunk; ++u)
        value[u] = Term::value(m[0][q][u], m[1][q][u], m[2][q][u], m[3][q][u], s1, s2, c1, c2);
    }
    store_map(q, value);
    for (int u = 0; u < Chunk; ++u)
      if (u < nu) sum += value[u];
  }
  return sum;
}

}  // namespace kssim::impl
