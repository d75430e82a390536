#include "io/Pieces.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace kssim::io {

void for_each_piece(std::size_t count, std::size_t pieces,
                    const std::function<void(std::size_t, std::size_t, std::size_t)>& body) {
  pieces = std::max<std::size_t>(1, pieces);
  const std::size_t size = (count + pieces - 1) / pieces;
  auto run = [&](std::size_t i) {
    const std::size_t begin = std::min(count, i * size);
    body(i, begin, std::min(count, begin + size));
  };
  std::vector<std::jthread> pool;
  for (std::size_t i = 1; i < pieces; ++i) pool.emplace_back(run, i);
  run(0);
}  // the jthreads join here

}  // namespace kssim::io
