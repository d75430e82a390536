// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// SSIM of a field distributed over the ranks of a Cartesian MPI communicator (CMake target kssim::mpi).
//
// Each rank holds one block (N, C, H, W) or (N, C, D, H, W) of the global field, the same N and C on every
// rank; the communicator's Cartesian dimensions are the spatial axes ([D,] H, W), and the blocks of
// Cartesian coordinate k + 1 along an axis start where those of k end. `offset` is the block's first cell
// in the global field. Padding (valid or same) is that of the global field: the results are those of the
// single-device functions (SSIM.hpp) on the whole field, to rounding.
//
//   MPI_Comm cart;  int dims[3] = {2, 2, 1}, periods[3] = {};
//   MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
//   double s = kssim::mpi::ssim(exec, cart, {d0, h0, w0}, block1, block2);       // every rank: the global mean
//   auto mb = kssim::mpi::map_block(cart, {d0, h0, w0}, block1, opts);         // this rank's part of the map
//   kssim::mpi::ssim_map(exec, cart, {d0, h0, w0}, block1, block2, map, opts);  // map: mb.extent
//   kssim::mpi::ssim_grad(exec, cart, {d0, h0, w0}, block1, block2, grad1, grad2, opts);
//
// Every call is collective over `cart`. The mean is the same, bitwise, on every rank, and the same
// decomposition gives bitwise the same results every time (partial sums added in rank order; gradient
// contributions across block borders added in a fixed order). Blocks may be thinner than the halo
// (window_size / 2) and splits uneven. Inconsistent blocks (extents, offsets, value types, N or C,
// options), a communicator whose topology does not match, or a problem any rank finds in its own
// arguments make every rank throw the same std::invalid_argument, before any halo is exchanged.
//
// The map pixel whose window is centred on a global cell belongs to the rank that owns the cell: with same
// padding the map block is the block; with valid padding it is the block's cells whose windows fit in the
// field, shifted by -window_size / 2 (map_block() says where; ranks near the border may have none).

#include <kssim/Options.hpp>
#include <kssim/SSIM.hpp>
#include <kssim/ViewChecks.hpp>
#include <kssim/impl/mpi/DistributedRun.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <array>
#include <stdexcept>
#include <string>

namespace kssim::mpi {

// A block's spatial offset in the global field: (H, W) for images, (D, H, W) for volumes.
template <class View>
using Offset = std::array<int, View::rank() - 2>;

// Where a rank's map block lies in the global map: offset ([Do,] Ho, Wo) and extents (N, C, [Do,] Ho, Wo).
template <int Rank>
struct MapBlock {
  std::array<int, Rank - 2> offset{};
  std::array<int, Rank> extent{};
};

}  // namespace kssim::mpi

namespace kssim::impl::mpi {

using kssim::mpi::MapBlock;
using kssim::mpi::Offset;

template <class F>
std::string problem_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

template <class T, class View>
impl::mpi::Decomposition agree(MPI_Comm cart, const Offset<View>& offset, const View& img, const Options& opts,
                               const std::string& local_problem) {
  if (opts.padding == Padding::Reflect || opts.padding == Padding::Replicate)
    throw std::invalid_argument(std::string("kssim: distributed SSIM takes valid or same padding, got ") +
                                to_string(opts.padding));
  const auto e = impl::extents_of(img);
  return impl::mpi::decompose(cart, int(View::rank()), int(sizeof(T)), e.data(), offset.data(), opts, local_problem);
}

template <int Rank>
MapBlock<Rank> map_block_of(const impl::mpi::Decomposition& dec) {
  MapBlock<Rank> m;
  m.extent[0] = dec.n;
  m.extent[1] = dec.c;
  for (int s = 0; s < Rank - 2; ++s) {
    const int a = 3 - (Rank - 2) + s;
    m.offset[s] = dec.my_map().lo[a];
    m.extent[2 + s] = dec.my_map().extent(a);
  }
  return m;
}

// Checks, agrees and runs; `map`, `grad1`, `grad2` may be empty Views.
template <class ExecSpace, class View1, class View2, class MapView, class Grad1, class Grad2>
double distributed(const ExecSpace& exec, MPI_Comm cart, const Offset<View1>& offset, const View1& img1,
                   const View2& img2, const MapView& map, const Grad1& grad1, const Grad2& grad2, const Options& opts) {
  static_assert(View1::rank() == 4 || View1::rank() == 5,
                "kssim::mpi: fields are rank 4 (N, C, H, W) or rank 5 (N, C, D, H, W)");
  check_image_view<ExecSpace, View1>();
  check_image_view<ExecSpace, View2>();
  check_same_kind<View1, View2>();
  check_output_view<ExecSpace, MapView>();
  check_output_view<ExecSpace, Grad1>();
  check_output_view<ExecSpace, Grad2>();
  check_same_kind<View1, MapView>();
  check_same_kind<View1, Grad1>();
  check_same_kind<View1, Grad2>();
  using T = impl::value_type_of<View1>;
  constexpr int Rank = int(View1::rank());
  const bool want1 = !impl::is_empty_view(grad1), want2 = !impl::is_empty_view(grad2);
  const auto extents = impl::extents_of(img1);
  const std::string local = problem_of([&] {
    impl::require_same_extents(img1, img2);
    if (want1) impl::require_extents("grad1", grad1, extents);
    if (want2) impl::require_extents("grad2", grad2, extents);
  });
  const impl::mpi::Decomposition dec = agree<T>(cart, offset, img1, opts, local);
  // The map block depends on the global field: a second agreement, on every rank (an empty map, or a rank
  // without map pixels, has nothing to check but must take part).
  agree_or_throw(cart, problem_of([&] {
    if (!impl::is_empty_view(map)) impl::require_extents("map", map, map_block_of<Rank>(dec).extent);
  }));
  impl::mpi::DistributedArgs<T> a;
  a.x = impl::as_rank5<impl::InputArray<T>>(img1);
  a.y = impl::as_rank5<impl::InputArray<T>>(img2);
  if (!impl::is_empty_view(map)) a.map = impl::as_rank5<impl::OutputArray<T>>(map);
  if (want1) a.grad1 = impl::as_rank5<impl::OutputArray<T>>(grad1);
  if (want2) a.grad2 = impl::as_rank5<impl::OutputArray<T>>(grad2);
  return impl::mpi::run<ExecSpace, T>(exec, cart, dec, a, opts);
}

}  // namespace kssim::impl::mpi

namespace kssim::mpi {

// This rank's map block for blocks like `img` (collective: the map depends on the global field).
template <class View>
MapBlock<int(View::rank())> map_block(MPI_Comm cart, const Offset<View>& offset, const View& img,
                                      const Options& opts = {}) {
  using T = impl::value_type_of<View>;
  return impl::mpi::map_block_of<int(View::rank())>(impl::mpi::agree<T>(cart, offset, img, opts, {}));
}

// Mean SSIM of the global field, returned on every rank.
template <class ExecSpace, class View1, class View2>
double ssim(const ExecSpace& exec, MPI_Comm cart, const Offset<View1>& offset, const View1& img1, const View2& img2,
            const Options& opts = {}) {
  using Out = impl::writable_like_t<View1>;
  return impl::mpi::distributed(exec, cart, offset, img1, img2, Out{}, Out{}, Out{}, opts);
}

// This rank's block of the global SSIM map (extents from map_block()); returns the global mean.
template <class ExecSpace, class View1, class View2, class MapView>
double ssim_map(const ExecSpace& exec, MPI_Comm cart, const Offset<View1>& offset, const View1& img1,
                const View2& img2, const MapView& map, const Options& opts = {}) {
  using Out = impl::writable_like_t<View1>;
  return impl::mpi::distributed(exec, cart, offset, img1, img2, map, Out{}, Out{}, opts);
}

// The global mean (returned) and this rank's blocks of its gradients d(mean)/d(img1), d(mean)/d(img2),
// including the contributions of windows centred on other ranks' cells. {} skips a gradient.
template <class ExecSpace, class View1, class View2, class Grad1 = impl::writable_like_t<View1>, class Grad2 = Grad1>
double ssim_grad(const ExecSpace& exec, MPI_Comm cart, const Offset<View1>& offset, const View1& img1,
                 const View2& img2, const Grad1& grad1, const Grad2& grad2 = {}, const Options& opts = {}) {
  using Out = impl::writable_like_t<View1>;
  return impl::mpi::distributed(exec, cart, offset, img1, img2, Out{}, grad1, grad2, opts);
}

// All of the above in one pass: map, grad1 and grad2 may each be empty Views.
template <class ExecSpace, class View1, class View2, class MapView, class Grad1, class Grad2>
double ssim_map_grad(const ExecSpace& exec, MPI_Comm cart, const Offset<View1>& offset, const View1& img1,
                     const View2& img2, const MapView& map, const Grad1& grad1, const Grad2& grad2,
                     const Options& opts = {}) {
  return impl::mpi::distributed(exec, cart, offset, img1, img2, map, grad1, grad2, opts);
}

}  // namespace kssim::mpi
