// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/ChannelAxis.hpp"

#include "cli/UsageError.hpp"

namespace kssim::cli {
namespace {

// Arrays of rank dims + 1 or more carry a channel axis (rank dims + 1: (C, spatial), dims + 2: (N, C, ...)).
bool has_channel_axis(const std::vector<std::size_t>& shape, int dims) {
  return shape.size() >= std::size_t(dims) + 1 && shape.size() <= std::size_t(dims) + 2;
}

// Moves the block of `spatial` elements and the `channels` axis past each other within each of `outer`
// blocks: (outer, spatial, channels) -> (outer, channels, spatial) when `to_first`, else the reverse.
template <class T>
std::vector<T> transposed(const std::vector<T>& v, std::size_t outer, std::size_t spatial, std::size_t channels,
                          bool to_first) {
  std::vector<T> out(v.size());
  for (std::size_t o = 0; o < outer; ++o) {
    const T* src = v.data() + o * spatial * channels;
    T* dst = out.data() + o * spatial * channels;
    for (std::size_t s = 0; s < spatial; ++s)
      for (std::size_t c = 0; c < channels; ++c) {
        if (to_first) dst[c * spatial + s] = src[s * channels + c];
        else dst[s * channels + c] = src[c * spatial + s];
      }
  }
  return out;
}

io::Array moved(io::Array array, int dims, bool to_first) {
  const auto& shape = array.shape;  // the layout before the move
  if (!has_channel_axis(shape, dims)) return array;
  const std::size_t rank = shape.size();
  const std::size_t outer = rank == std::size_t(dims) + 2 ? shape[0] : 1;
  const std::size_t first = rank - std::size_t(dims) - 1;  // the channel axis's position when first
  const std::size_t channels = to_first ? shape[rank - 1] : shape[first];
  std::size_t spatial = 1;
  for (std::size_t i = 0; i < std::size_t(dims); ++i) spatial *= to_first ? shape[first + i] : shape[first + 1 + i];
  std::vector<std::size_t> s = shape;
  if (to_first) {
    s.erase(s.end() - 1);
    s.insert(s.begin() + std::ptrdiff_t(first), channels);
  } else {
    s.erase(s.begin() + std::ptrdiff_t(first));
    s.push_back(channels);
  }
  array.values = std::visit(
      [&](const auto& v) -> decltype(array.values) { return transposed(v, outer, spatial, channels, to_first); },
      array.values);
  array.shape = std::move(s);
  return array;
}

}  // namespace

ChannelAxis channel_axis_of(const std::string& which, const std::vector<std::size_t>& shape, int dims,
                            const std::string& option) {
  if (!has_channel_axis(shape, dims)) return ChannelAxis::First;
  if (option == "first") return ChannelAxis::First;
  if (option == "last") return ChannelAxis::Last;
  const std::size_t c_first = shape[shape.size() - std::size_t(dims) - 1], last = shape.back();
  if (c_first > 4 && (last == 1 || last == 3 || last == 4))
    throw UsageError(which + " has shape " + io::shape_string(shape) + ": is its last axis " + std::to_string(last) +
                     " channels (channel-last, as NumPy/PIL/scikit-image images) or " + std::to_string(c_first) +
                     " channels of a " + std::to_string(last) +
                     "-pixel-wide image? Say which with --channel-axis last or --channel-axis first");
  return ChannelAxis::First;
}

std::vector<std::size_t> channels_first_shape(const std::vector<std::size_t>& shape, int dims, ChannelAxis axis) {
  if (axis == ChannelAxis::First || !has_channel_axis(shape, dims)) return shape;
  std::vector<std::size_t> s = shape;
  const std::size_t c = s.back();
  s.pop_back();
  s.insert(s.begin() + std::ptrdiff_t(shape.size() - std::size_t(dims) - 1), c);
  return s;
}

io::Array channels_first(io::Array array, int dims, ChannelAxis from) {
  return from == ChannelAxis::Last ? moved(std::move(array), dims, true) : array;
}

io::Array channels_last(io::Array array, int dims, ChannelAxis to) {
  return to == ChannelAxis::Last ? moved(std::move(array), dims, false) : array;
}

}  // namespace kssim::cli
