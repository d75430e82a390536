// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The halo exchange and its adjoint.
//
// forward: each rank's extended box gets, from every rank whose block it overlaps (its own included), the
// cells of the overlap: neighbours across faces, edges and corners, and ranks further away when blocks
// are thinner than the halo. Every rank knows every block (Decomposition), so it knows whom to send what.
// adjoint: the gradients on the extended box go back the same way, and each owner adds what it receives
// to its own part, in a fixed order (its own part first, then the other ranks in rank order), so the same
// decomposition gives bitwise the same gradients.
//
// Messages are host-staged (device -> host, MPI, host -> device) unless the memory is host-accessible, or
// the MPI library is CUDA-aware (MPIX_Query_cuda_support) and the memory is CUDA memory: then MPI reads
// and writes the device buffers directly.

#include <kssim/impl/mpi/BoxCopy.hpp>
#include <kssim/impl/mpi/Decomposition.hpp>
#include <kssim/impl/mpi/Scratch.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <chrono>
#include <type_traits>
#include <vector>

namespace kssim::impl::mpi {

// Seconds this process spent in halo exchanges (forward and adjoint: packing, staging, MPI, unpacking and
// the gradient sums), counted only while `enabled` (each exchange then ends with a fence, to count its
// kernels): what `kssim compare --decompose --repeat` reports as the exchange's share.
struct ExchangeClock {
  bool enabled = false;
  double seconds = 0;
  static ExchangeClock& get() {
    static ExchangeClock c;
    return c;
  }
};

// Adds the time from its construction to its destruction to ExchangeClock, when enabled.
template <class ExecSpace>
class ExchangeTimer {
 public:
  explicit ExchangeTimer(const ExecSpace& exec) : exec_(exec), start_(std::chrono::steady_clock::now()) {}
  ~ExchangeTimer() {
    ExchangeClock& c = ExchangeClock::get();
    if (!c.enabled) return;
    exec_.fence("kssim::mpi: timed exchange");
    c.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  ExchangeTimer(const ExchangeTimer&) = delete;
  ExchangeTimer& operator=(const ExchangeTimer&) = delete;

 private:
  const ExecSpace& exec_;
  std::chrono::steady_clock::time_point start_;
};

template <class T>
MPI_Datatype mpi_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

// Whether MPI may be handed pointers into Mem directly.
template <class Mem>
bool mpi_reads_memory() {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible) return true;
#if defined(KOKKOS_ENABLE_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if constexpr (std::is_same_v<Mem, Kokkos::CudaSpace>) return MPIX_Query_cuda_support() == 1;
#endif
  return false;
}

// One message: to or from `peer`, the cells of `box`, at `offset` elements into the buffer.
struct Transfer {
  int peer = 0;
  Box box;
  std::size_t offset = 0;
};

template <class ExecSpace, class T>
class HaloExchange {
 public:
  using Mem = typename ExecSpace::memory_space;
  using Buffer = Kokkos::View<T*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  // Room for up to `fields` arrays per message (2: both images, or both gradients), in Scratch buffers.
  HaloExchange(const ExecSpace& exec, MPI_Comm comm, const Decomposition& dec, int fields) : comm_(comm), dec_(dec) {
    const std::size_t slice = std::size_t(dec.n) * dec.c;
    std::size_t out = 0, in = 0;
    for (int q = 0; q < dec.size; ++q) {  // in rank order: the adjoint's fixed summation order
      if (q == dec.rank) continue;
      const Box send = dec.my_block().intersect(dec.extended[q]);
      if (!send.empty()) {
        outgoing_.push_back({q, send, out});
        out += slice * fields * std::size_t(send.volume());
      }
      const Box recv = dec.my_extended().intersect(dec.owned[q]);
      if (!recv.empty()) {
        incoming_.push_back({q, recv, in});
        in += slice * fields * std::size_t(recv.volume());
      }
    }
    auto& scratch = Scratch<ExecSpace, T>::get();
    outgoing_buffer_ = Buffer(scratch.buffer(exec, ScratchSlot::Outgoing, out), out);
    incoming_buffer_ = Buffer(scratch.buffer(exec, ScratchSlot::Incoming, in), in);
  }

  // Fills the extended arrays `ext` (placed at the extended box's corner, `fields` of them) from the blocks
  // `blocks` of every rank: own cells, neighbours' cells, zeros outside the field. Collective.
  void forward(const ExecSpace& exec, const std::vector<PlacedArray<const T>>& blocks,
               const std::vector<PlacedArray<T>>& ext) {
    const ExchangeTimer<ExecSpace> timer(exec);
    const Box& mine = dec_.my_extended();
    if (!mine.empty() && !dec_.field().contains(mine))
      for (const auto& e : ext) zero_box(exec, e, mine);  // same padding: zeros outside the field
    const int fields = int(blocks.size());
    for (const Transfer& t : outgoing_)
      for (int f = 0; f < fields; ++f) copy_box(exec, blocks[f], slot(outgoing_buffer_, t, f), t.box, false);
    if (!mine.empty())
      for (int f = 0; f < fields; ++f) copy_box(exec, blocks[f], ext[f], dec_.my_block(), false);
    exchange(exec, outgoing_, outgoing_buffer_, incoming_, incoming_buffer_, fields, 17);
    for (const Transfer& t : incoming_)
      for (int f = 0; f < fields; ++f) copy_box(exec, as_const(slot(incoming_buffer_, t, f)), ext[f], t.box, false);
  }

  // The adjoint of forward(): `blocks` (each rank's gradient, strided) = its own part of `ext` plus what the
  // other ranks' extended boxes hold of its cells, added in rank order. Collective.
  void adjoint(const ExecSpace& exec, const std::vector<PlacedArray<const T>>& ext,
               const std::vector<PlacedArray<T>>& blocks) {
    const ExchangeTimer<ExecSpace> timer(exec);
    const int fields = int(blocks.size());
    for (const Transfer& t : incoming_)
      for (int f = 0; f < fields; ++f) copy_box(exec, ext[f], slot(incoming_buffer_, t, f), t.box, false);
    exchange(exec, incoming_, incoming_buffer_, outgoing_, outgoing_buffer_, fields, 18);
    const bool own = !dec_.my_extended().empty();  // else this rank's windows are none: its own part is 0
    for (int f = 0; f < fields; ++f) {
      if (own) copy_box(exec, ext[f], blocks[f], dec_.my_block(), false);
      else zero_box(exec, blocks[f], dec_.my_block());
      for (const Transfer& t : outgoing_)
        copy_box(exec, as_const(slot(outgoing_buffer_, t, f)), blocks[f], t.box, true);
    }
  }

 private:
  // Field f of transfer t's message: a packed (N, C, box) array.
  PlacedArray<T> slot(const Buffer& buffer, const Transfer& t, int f) const {
    const std::size_t part = std::size_t(dec_.n) * dec_.c * std::size_t(t.box.volume());
    return packed(buffer.data() + t.offset + f * part, dec_.n, dec_.c, t.box);
  }
  static PlacedArray<const T> as_const(const PlacedArray<T>& p) {
    PlacedArray<const T> c;
    c.array.ptr = p.array.ptr;
    for (int i = 0; i < 5; ++i) {
      c.array.ext[i] = p.array.ext[i];
      c.array.str[i] = p.array.str[i];
    }
    c.origin = p.origin;
    return c;
  }

  // Sends `sends` from `send_buffer`, receives `recvs` into `recv_buffer`.
  void exchange(const ExecSpace& exec, const std::vector<Transfer>& sends, const Buffer& send_buffer,
                const std::vector<Transfer>& recvs, const Buffer& recv_buffer, int fields,
                int tag) const {
    const bool direct = mpi_reads_memory<Mem>();
    auto send_host = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, send_buffer);
    auto recv_host = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, recv_buffer);
    if (!direct) Kokkos::deep_copy(exec, send_host, send_buffer);
    exec.fence("kssim::mpi: halo packed");
    T* out = direct ? send_buffer.data() : send_host.data();
    T* in = direct ? recv_buffer.data() : recv_host.data();
    const std::size_t per_cell = std::size_t(dec_.n) * dec_.c * fields;
    std::vector<MPI_Request> requests;
    requests.reserve(sends.size() + recvs.size());
    for (const Transfer& t : recvs) {
      requests.emplace_back();
      MPI_Irecv(in + t.offset, int(per_cell * t.box.volume()), mpi_type<T>(), t.peer, tag, comm_, &requests.back());
    }
    for (const Transfer& t : sends) {
      requests.emplace_back();
      MPI_Isend(out + t.offset, int(per_cell * t.box.volume()), mpi_type<T>(), t.peer, tag, comm_, &requests.back());
    }
    MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    if (!direct) Kokkos::deep_copy(exec, recv_buffer, recv_host);
  }

  MPI_Comm comm_;
  const Decomposition& dec_;
  std::vector<Transfer> outgoing_, incoming_;
  Buffer outgoing_buffer_, incoming_buffer_;
};

}  // namespace kssim::impl::mpi
