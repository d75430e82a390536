#pragma once
// A range of work cut into contiguous pieces, one thread each: what the map picture's colouring, row
// filtering and compression share (plain std::thread, so that it works whatever Kokkos backend the tool uses).

#include <cstddef>
#include <functional>

namespace kssim::io {

// Calls body(piece, begin, end) for `pieces` contiguous pieces of [0, count), each on its own thread (the
// first on the caller's), and returns when all are done.
void for_each_piece(std::size_t count, std::size_t pieces,
                    const std::function<void(std::size_t, std::size_t, std::size_t)>& body);

}  // namespace kssim::io
