// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/Pieces.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace kssim::io {

void for_each_piece(std::size_t count, std::size_t pieces,
                    const std::function<void(std::size_t, std::size_t, std::size_t)>& body, std::size_t threads) {
  pieces = std::max<std::size_t>(1, pieces);
  threads = threads == 0 ? pieces : std::min(threads, pieces);
  const std::size_t size = (count + pieces - 1) / pieces;
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < pieces;) {
      const std::size_t begin = std::min(count, i * size);
      body(i, begin, std::min(count, begin + size));
    }
  };
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}  // the jthreads join here

}  // namespace kssim::io
