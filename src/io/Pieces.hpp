// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A range of work cut into contiguous pieces, run on a few threads: what the map picture's compression and
// the sRGB conversion of `kssim ssimulacra2` share (plain std::thread, so that it works whatever Kokkos
// backend the tool uses).

#include <cstddef>
#include <functional>

namespace kssim::io {

// Calls body(piece, begin, end) for `pieces` contiguous pieces of [0, count) and returns when all are done.
// They run on `threads` threads (0: one per piece), the caller's among them, each taking the next piece not
// yet started: with more pieces than threads, a thread that the system holds up delays the end by one
// piece, not by a fixed share of the work.
void for_each_piece(std::size_t count, std::size_t pieces,
                    const std::function<void(std::size_t, std::size_t, std::size_t)>& body, std::size_t threads = 0);

}  // namespace kssim::io
