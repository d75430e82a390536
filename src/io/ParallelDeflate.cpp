#include "io/ParallelDeflate.hpp"

#include "io/Error.hpp"
#include "io/Pieces.hpp"

#include <zlib.h>

#include <algorithm>

namespace kssim::io {

std::vector<unsigned char> zlib_compress_parallel(std::span<const unsigned char> data, int level, unsigned threads) {
  const std::size_t min_piece = std::size_t(1) << 20;
  const std::size_t pieces = std::max<std::size_t>(1, std::min<std::size_t>(threads, data.size() / min_piece));
  std::vector<std::vector<unsigned char>> out(pieces);
  std::vector<uLong> checksums(pieces);
  std::vector<std::size_t> lengths(pieces);
  std::vector<char> failed(pieces, 0);
  for_each_piece(data.size(), pieces, [&](std::size_t i, std::size_t begin, std::size_t end) {
    const bool last = i + 1 == pieces;
    lengths[i] = end - begin;
    checksums[i] = adler32(adler32(0, nullptr, 0), data.data() + begin, uInt(end - begin));
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {  // -15: raw deflate
      failed[i] = 1;
      return;
    }
    out[i].resize(deflateBound(&z, uLong(end - begin)) + 64);  // + the sync flush's empty block
    z.next_in = const_cast<Bytef*>(data.data() + begin);
    z.avail_in = uInt(end - begin);
    z.next_out = out[i].data();
    z.avail_out = uInt(out[i].size());
    const int status = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
    if (status != (last ? Z_STREAM_END : Z_OK) || z.avail_in != 0) failed[i] = 1;
    out[i].resize(z.total_out);
    deflateEnd(&z);
  });
  if (std::count(failed.begin(), failed.end(), 1) > 0) throw Error("zlib compression failed");
  std::vector<unsigned char> stream = {0x78, 0x01};  // deflate, 32 KiB window; FCHECK makes it a multiple of 31
  uLong checksum = checksums[0];
  for (std::size_t i = 0; i < pieces; ++i) {
    stream.insert(stream.end(), out[i].begin(), out[i].end());
    if (i > 0) checksum = adler32_combine(checksum, checksums[i], z_off_t(lengths[i]));
  }
  for (int k = 3; k >= 0; --k) stream.push_back(static_cast<unsigned char>((checksum >> (8 * k)) & 0xff));
  return stream;
}

}  // namespace kssim::io
