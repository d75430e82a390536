// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// One distributed SSIM evaluation on this rank: agree on the decomposition, exchange the halos into the
// extended block, run the single-device library on it (valid padding), reduce the map sums in rank order,
// and send the gradients' halo parts back to their owners. Every step is collective; a rank without map
// pixels still takes part in the exchanges and the reduction. Buffers come from Scratch (kept between calls).

#include <kssim/Options.hpp>
#include <kssim/impl/core/KernelArrays.hpp>
#include <kssim/impl/ssim/PlanCache.hpp>
#include <kssim/impl/ssim/Slabs.hpp>
#include <kssim/impl/mpi/Decomposition.hpp>
#include <kssim/impl/mpi/HaloExchange.hpp>
#include <kssim/impl/mpi/Scratch.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <string>
#include <vector>

namespace kssim::impl::mpi {

template <class T>
struct DistributedArgs {
  InputArray<T> x, y;             // this rank's blocks
  OutputArray<T> map;             // this rank's map block, or empty
  OutputArray<T> grad1, grad2;    // this rank's gradient blocks, or empty
};

// The global mean, bitwise the same on every rank: the ranks' partial sums gathered and added in rank order.
inline double sum_in_rank_order(MPI_Comm comm, double local, int size) {
  std::vector<double> all(size);
  MPI_Allgather(&local, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm);
  double total = 0;
  for (double s : all) total += s;
  return total;
}

template <class ExecSpace, class T>
double run(const ExecSpace& exec, MPI_Comm comm, const Decomposition& dec, const DistributedArgs<T>& a,
           const Options& opts) {
  using Mem = typename ExecSpace::memory_space;
  using Ext = Kokkos::View<T*****, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  auto& scratch = Scratch<ExecSpace, T>::get();
  const std::lock_guard<std::mutex> lock(scratch.call_mutex());
  const Box& ext_box = dec.my_extended();
  const bool has_map = !ext_box.empty();
  auto extended = [&](ScratchSlot slot) {
    if (!has_map) return Ext();
    const std::size_t count = std::size_t(dec.n) * dec.c * std::size_t(ext_box.volume());
    return Ext(scratch.buffer(exec, slot, count), dec.n, dec.c, ext_box.extent(0), ext_box.extent(1), ext_box.extent(2));
  };
  auto placed = [&](const Ext& v) {
    return PlacedArray<T>{as_rank5<OutputArray<T>>(v), ext_box.lo};
  };
  auto placed_const = [&](const Ext& v) {
    return PlacedArray<const T>{as_rank5<InputArray<T>>(v), ext_box.lo};
  };
  const std::array<int, 3> block_lo = dec.my_block().lo;

  const Ext x_ext = extended(ScratchSlot::X), y_ext = extended(ScratchSlot::Y);
  HaloExchange<ExecSpace, T> halo(exec, comm, dec, 2);
  halo.forward(exec, {PlacedArray<const T>{a.x, block_lo}, PlacedArray<const T>{a.y, block_lo}},
               {placed(x_ext), placed(y_ext)});

  const PartialPlanes wanted{a.grad1.ptr != nullptr, a.grad2.ptr != nullptr};
  Ext g1_ext, g2_ext;
  double local = 0;
  if (has_map) {
    Options valid = opts;
    valid.padding = Padding::Valid;
    const Geometry g = geometry_of(dec, ext_box, opts);
    // One library call, split into slabs when the extended block passes 2^30 elements or the workspace
    // budget (Slabs.hpp).
    const auto plan = one_call_plan<ExecSpace, T>(exec, g, valid, wanted);
    const InputArray<T> xe = as_rank5<InputArray<T>>(x_ext), ye = as_rank5<InputArray<T>>(y_ext);
    if (wanted.any()) {
      if (wanted.image1) g1_ext = extended(ScratchSlot::Grad1);
      if (wanted.image2) g2_ext = extended(ScratchSlot::Grad2);
      // The plan scales by 1 / (its own map pixels); the global mean divides by all of them.
      const double scale = double(g.map_size()) / dec.map_count();
      const OutputArray<T> g1 = wanted.image1 ? as_rank5<OutputArray<T>>(g1_ext) : OutputArray<T>{};
      const OutputArray<T> g2 = wanted.image2 ? as_rank5<OutputArray<T>>(g2_ext) : OutputArray<T>{};
      if (a.map.data() == nullptr) {
        plan.forward_backward(exec, xe, ye, {.grad1 = g1, .grad2 = g2, .scale = scale});
      } else {
        plan.forward(exec, xe, ye, a.map);
        plan.backward(exec, xe, ye, {.grad1 = g1, .grad2 = g2, .scale = scale});
      }
    } else {
      plan.forward(exec, xe, ye, a.map);
    }
    Kokkos::deep_copy(exec, local, plan.total());
    exec.fence("kssim::mpi: local map sum");
  }
  const double mean = sum_in_rank_order(comm, local, dec.size) / dec.map_count();

  if (wanted.any()) {
    std::vector<PlacedArray<const T>> from;
    std::vector<PlacedArray<T>> to;
    if (wanted.image1) {
      from.push_back(placed_const(g1_ext));
      to.push_back({a.grad1, block_lo});
    }
    if (wanted.image2) {
      from.push_back(placed_const(g2_ext));
      to.push_back({a.grad2, block_lo});
    }
    halo.adjoint(exec, from, to);
    exec.fence("kssim::mpi: gradients");
  }
  return mean;
}

}  // namespace kssim::impl::mpi
