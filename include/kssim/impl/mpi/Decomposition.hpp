// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a global field is split over the ranks of a Cartesian communicator, agreed collectively.
//
// Every rank describes its block (tensor rank, value type, N, C, spatial offset and extent, Cartesian
// coordinates, options, and any error it found locally) and MPI_Allgather gives every rank every
// description. Each rank then runs the same checks on the same data, so either every rank throws the same
// std::invalid_argument or none does: no rank can go on to an exchange that another has left (a hang).
//
// Geometry: 2D fields are volumes with D = 1 and no halo along D. The map pixel whose window is centred on
// global cell p belongs to the rank that owns p. A rank's extended box is its block grown by the halo
// r = (window - 1) / 2 on every side; valid padding on the extended box is the global map of the rank's
// cells. With valid padding the box stops at the global border (the windows stay inside the field); with
// same padding it reaches r cells past it, and those cells are zeros: the library's same padding is zero
// padding of the inputs (RowBlur.hpp: "outside the image every pixel is 0"). A rank that owns no map pixel
// (valid padding, a block inside the border's r cells) has an empty extended box.

#include <kssim/Options.hpp>
#include <kssim/impl/core/Geometry.hpp>
#include <kssim/impl/mpi/BoxCopy.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kssim::impl::mpi {

// What each rank tells every other: plain data, sent as bytes.
struct BlockDescription {
  int tensor_rank = 0;  // 4 or 5
  int value_size = 0;   // sizeof the value type
  int n = 0, c = 0;
  int cart_dims = 0;    // of the communicator
  int offset[3] = {0, 0, 0}, extent[3] = {1, 1, 1}, coords[3] = {0, 0, 0};  // (D, H, W); D = 0, 1 for 2D
  int window = 0, padding = 0, weights = 0;  // weights: Options::window (Exact, Float32)
  double sigma = 0, k1 = 0, k2 = 0, data_range = 0;
  char error[240] = {};  // a problem this rank found on its own, or empty
};

inline const char* axis_name(int a) { return a == 0 ? "D" : a == 1 ? "H" : "W"; }

[[noreturn]] inline void fail(const std::string& what) { throw std::invalid_argument("kssim::mpi: " + what); }

// Every rank's error text (empty for none), gathered: every rank throws the lowest rank's, or none does.
inline void agree_or_throw(MPI_Comm comm, const std::string& local_error) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  char mine[240] = {};
  std::strncpy(mine, local_error.c_str(), sizeof(mine) - 1);
  std::vector<char> all(std::size_t(size) * sizeof(mine));
  MPI_Allgather(mine, sizeof(mine), MPI_CHAR, all.data(), sizeof(mine), MPI_CHAR, comm);
  for (int q = 0; q < size; ++q)
    if (all[std::size_t(q) * sizeof(mine)] != 0)
      fail("rank " + std::to_string(q) + ": " + std::string(&all[std::size_t(q) * sizeof(mine)]));
}

// The agreed decomposition, seen from one rank.
struct Decomposition {
  int rank = 0, size = 1;
  int n = 0, c = 0;
  bool volumetric = false;
  int halo[3] = {0, 0, 0};            // cells of halo along (D, H, W)
  std::array<int, 3> global{1, 1, 1};  // the global field's spatial extents
  Padding padding = Padding::Valid;
  std::vector<Box> owned;             // every rank's block
  std::vector<Box> extended;          // every rank's extended box (possibly empty)
  std::vector<Box> map;               // every rank's map block, in global map coordinates

  Box field() const { return Box{{0, 0, 0}, global}; }
  const Box& my_block() const { return owned[rank]; }
  const Box& my_extended() const { return extended[rank]; }
  const Box& my_map() const { return map[rank]; }
  // Map pixels of the whole field, over N and C.
  double map_count() const {
    double m = double(n) * c;
    for (int a = 0; a < 3; ++a) m *= double(padding == Padding::Valid ? global[a] - 2 * halo[a] : global[a]);
    return m;
  }
};

// The library's geometry of an extended box: valid padding on it (with the caller's window and options).
inline Geometry geometry_of(const Decomposition& dec, const Box& ext, Options opts) {
  opts.padding = Padding::Valid;
  if (dec.volumetric)
    return make_geometry<5>({dec.n, dec.c, ext.extent(0), ext.extent(1), ext.extent(2)}, opts);
  return make_geometry<4>({dec.n, dec.c, ext.extent(1), ext.extent(2)}, opts);
}

inline BlockDescription describe_block(MPI_Comm comm, int tensor_rank, int value_size, const int* extents,
                                       const int* offset, const Options& opts, const std::string& local_error) {
  BlockDescription b;
  b.tensor_rank = tensor_rank;
  b.value_size = value_size;
  b.n = extents[0];
  b.c = extents[1];
  const int spatial = tensor_rank - 2, first = 3 - spatial;
  for (int s = 0; s < spatial; ++s) {
    b.offset[first + s] = offset[s];
    b.extent[first + s] = extents[2 + s];
  }
  b.window = opts.window_size;
  b.padding = int(opts.padding);
  b.weights = int(opts.window);
  b.sigma = opts.sigma;
  b.k1 = opts.k1;
  b.k2 = opts.k2;
  b.data_range = opts.data_range;
  std::string error = local_error;
  int topology = MPI_UNDEFINED;
  MPI_Topo_test(comm, &topology);
  if (topology != MPI_CART) {
    if (error.empty()) error = "the communicator has no Cartesian topology (make one with MPI_Cart_create)";
  } else {
    MPI_Cartdim_get(comm, &b.cart_dims);
    std::vector<int> dims(std::max(b.cart_dims, 1)), periods(dims.size()), coords(dims.size());
    MPI_Cart_get(comm, b.cart_dims, dims.data(), periods.data(), coords.data());
    for (int s = 0; s < spatial && s < b.cart_dims; ++s) b.coords[first + s] = coords[s];
  }
  if (error.empty()) {
    try {
      validate(opts);
    } catch (const std::invalid_argument& e) {
      error = e.what();
    }
  }
  std::strncpy(b.error, error.c_str(), sizeof(b.error) - 1);
  return b;
}

// Collective: every rank of `comm` calls it with its own block. `extents` are the block's (N, C, [D,] H, W),
// `offset` its spatial offset in the global field ([D,] H, W); `local_error` a problem the caller found.
inline Decomposition decompose(MPI_Comm comm, int tensor_rank, int value_size, const int* extents, const int* offset,
                               const Options& opts, const std::string& local_error = {}) {
  Decomposition dec;
  MPI_Comm_rank(comm, &dec.rank);
  MPI_Comm_size(comm, &dec.size);
  const BlockDescription mine = describe_block(comm, tensor_rank, value_size, extents, offset, opts, local_error);
  std::vector<BlockDescription> all(dec.size);
  MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine), MPI_BYTE, comm);

  // From here on every rank decides the same on the same data.
  for (int q = 0; q < dec.size; ++q)
    if (all[q].error[0]) fail("rank " + std::to_string(q) + ": " + all[q].error);
  const BlockDescription& b0 = all[0];
  for (int q = 1; q < dec.size; ++q) {
    const BlockDescription& b = all[q];
    auto differs = [&](const char* what) {
      fail(std::string("rank ") + std::to_string(q) + " disagrees with rank 0 on " + what);
    };
    if (b.tensor_rank != b0.tensor_rank) differs("the tensor rank (2D images against 3D volumes)");
    if (b.value_size != b0.value_size) differs("the value type (float against double)");
    if (b.n != b0.n || b.c != b0.c) differs("N or C (only the spatial axes are split)");
    if (b.window != b0.window || b.padding != b0.padding || b.weights != b0.weights || b.sigma != b0.sigma || b.k1 != b0.k1 ||
        b.k2 != b0.k2 || b.data_range != b0.data_range)
      differs("the options");
  }
  const int spatial = b0.tensor_rank - 2, first = 3 - spatial;
  if (b0.cart_dims != spatial)
    fail("the Cartesian communicator has " + std::to_string(b0.cart_dims) + " dimensions, the blocks " +
         std::to_string(spatial) + " spatial axes");
  dec.n = b0.n;
  dec.c = b0.c;
  dec.volumetric = spatial == 3;
  dec.padding = Padding(b0.padding);
  const int r = b0.window / 2;
  for (int a = first; a < 3; ++a) dec.halo[a] = r;

  // The blocks must tile the field as a Cartesian product: along each axis, the ranks of one coordinate
  // share offset and extent, and coordinate k + 1 starts where k ends, from 0.
  for (int a = first; a < 3; ++a) {
    int count = 0;
    for (const auto& b : all) count = std::max(count, b.coords[a] + 1);
    std::vector<int> off(count, -1), ext(count, -1), who(count, -1);
    for (int q = 0; q < dec.size; ++q) {
      const BlockDescription& b = all[q];
      if (b.extent[a] < 1) fail("rank " + std::to_string(q) + " has an empty block along " + axis_name(a));
      const int k = b.coords[a];
      if (who[k] < 0) {
        who[k] = q;
        off[k] = b.offset[a];
        ext[k] = b.extent[a];
      } else if (off[k] != b.offset[a] || ext[k] != b.extent[a]) {
        std::ostringstream s;
        s << "ranks " << who[k] << " and " << q << " share Cartesian coordinate " << k << " along " << axis_name(a)
          << " but their blocks span [" << off[k] << ", " << off[k] + ext[k] << ") and [" << b.offset[a] << ", "
          << b.offset[a] + b.extent[a] << ")";
        fail(s.str());
      }
    }
    int expected = 0;
    for (int k = 0; k < count; ++k) {
      if (who[k] < 0) fail(std::string("no rank has Cartesian coordinate ") + std::to_string(k) + " along " + axis_name(a));
      if (off[k] != expected) {
        std::ostringstream s;
        s << "the blocks do not tile the field along " << axis_name(a) << ": Cartesian coordinate " << k << " (rank "
          << who[k] << ") starts at offset " << off[k] << ", expected " << expected;
        fail(s.str());
      }
      expected += ext[k];
    }
    dec.global[a] = expected;
    if (dec.padding == Padding::Valid && expected < b0.window)
      fail(std::string("with valid padding the global field must be >= window_size ") + std::to_string(b0.window) +
           " along " + axis_name(a) + ", got " + std::to_string(expected));
  }

  // Boxes: owned, extended, map.
  for (int q = 0; q < dec.size; ++q) {
    Box own, ext, map;
    bool has_map = true;
    for (int a = 0; a < 3; ++a) {
      const int o = all[q].offset[a], e = all[q].extent[a], h = dec.halo[a], g = dec.global[a];
      own.lo[a] = o;
      own.hi[a] = o + e;
      if (dec.padding == Padding::Same) {
        ext.lo[a] = o - h;
        ext.hi[a] = o + e + h;
        map.lo[a] = o;
        map.hi[a] = o + e;
      } else {  // map pixel m is centred on cell m + h; this rank owns the centres in [o, o + e)
        map.lo[a] = std::max(o, h) - h;
        map.hi[a] = std::max(map.lo[a], std::min(o + e, g - h) - h);
        ext.lo[a] = map.lo[a];
        ext.hi[a] = map.hi[a] + 2 * h;
      }
      has_map = has_map && map.hi[a] > map.lo[a];
    }
    if (!has_map) ext = Box{};
    // The extended block is one library call: it must pass the library's own checks, here, on every rank.
    if (!ext.empty()) {
      try {
        geometry_of(dec, ext, opts);
      } catch (const std::invalid_argument& e) {
        fail("rank " + std::to_string(q) + "'s block with its halo: " + e.what());
      }
    }
    if ((long long)dec.n * dec.c * own.volume() > 2147483647ll)
      fail("rank " + std::to_string(q) + "'s block has more than 2^31 - 1 elements");
    dec.owned.push_back(own);
    dec.extended.push_back(ext);
    dec.map.push_back(map);
  }
  return dec;
}

}  // namespace kssim::impl::mpi
