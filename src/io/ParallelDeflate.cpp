// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/ParallelDeflate.hpp"

#include "io/Error.hpp"
#include "io/Pieces.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace kssim::io {
namespace {

// Bytes produced and deflated at a time per thread: small enough to stay in L2, large enough that a call
// to the writer and to deflate() costs nothing in comparison.
constexpr std::size_t batch_bytes = std::size_t(128) << 10;

// Deflates units [begin, end) as raw deflate into `out`, ending with a sync flush (or, when `last`, the end
// of the stream); returns the Adler-32 of the uncompressed bytes. False if zlib fails.
bool deflate_piece(std::size_t begin, std::size_t end, std::size_t unit_bytes, const UnitWriter& write, int level,
                   bool last, std::vector<unsigned char>& out, uLong& checksum) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;  // -15: raw deflate
  // Reserving the bound touches no memory; the output then grows without being copied.
  out.reserve(out.size() + deflateBound(&z, uLong((end - begin) * unit_bytes)) + 64);
  const std::size_t per_batch = std::max<std::size_t>(1, batch_bytes / std::max<std::size_t>(1, unit_bytes));
  const std::unique_ptr<unsigned char[]> in(new unsigned char[per_batch * unit_bytes]);
  const std::unique_ptr<unsigned char[]> staging(new unsigned char[batch_bytes]);
  checksum = adler32(0, nullptr, 0);
  bool ok = true;
  for (std::size_t first = begin;; first += per_batch) {
    const std::size_t count = std::min(per_batch, end - std::min(end, first));
    const bool final_batch = first + count >= end;
    if (count > 0) {
      write(first, count, in.get());
      checksum = adler32(checksum, in.get(), uInt(count * unit_bytes));
    }
    z.next_in = in.get();
    z.avail_in = uInt(count * unit_bytes);
    const int flush = !final_batch ? Z_NO_FLUSH : (last ? Z_FINISH : Z_SYNC_FLUSH);
    int status;
    do {  // until the batch is consumed and, at the end, the flush is complete or the stream finished
      z.next_out = staging.get();
      z.avail_out = uInt(batch_bytes);
      status = deflate(&z, flush);
      if (status == Z_STREAM_ERROR) return deflateEnd(&z), false;
      out.insert(out.end(), staging.get(), staging.get() + (batch_bytes - z.avail_out));
    } while (z.avail_in != 0 || z.avail_out == 0 || (flush == Z_FINISH && status == Z_OK));
    if (final_batch) {
      ok = last ? status == Z_STREAM_END : (status == Z_OK || status == Z_BUF_ERROR);
      break;
    }
  }
  deflateEnd(&z);
  return ok;
}

}  // namespace

std::vector<std::vector<unsigned char>> zlib_compress_units(std::size_t units, std::size_t unit_bytes,
                                                            const UnitWriter& write, int level, unsigned threads) {
  // Four pieces per thread, taken in turn: on a busy machine a thread held up by other processes then delays
  // the end by one small piece. Each piece costs a few hundred bytes of stream.
  const std::size_t min_piece = std::size_t(1) << 20;
  const std::size_t pieces =
      std::max<std::size_t>(1, std::min<std::size_t>({std::size_t(4) * threads, units * unit_bytes / min_piece, units}));
  std::vector<std::vector<unsigned char>> parts(pieces);
  std::vector<uLong> checksums(pieces);
  std::vector<std::size_t> lengths(pieces);
  std::vector<char> failed(pieces, 0);
  parts[0] = {0x78, 0x01};  // deflate, 32 KiB window; FCHECK makes it a multiple of 31
  for_each_piece(
      units, pieces,
      [&](std::size_t i, std::size_t begin, std::size_t end) {
        lengths[i] = (end - begin) * unit_bytes;
        if (!deflate_piece(begin, end, unit_bytes, write, level, i + 1 == pieces, parts[i], checksums[i])) failed[i] = 1;
      },
      threads);
  if (std::count(failed.begin(), failed.end(), 1) > 0) throw Error("zlib compression failed");
  uLong checksum = checksums[0];
  for (std::size_t i = 1; i < pieces; ++i) checksum = adler32_combine(checksum, checksums[i], z_off_t(lengths[i]));
  for (int k = 3; k >= 0; --k) parts.back().push_back(static_cast<unsigned char>((checksum >> (8 * k)) & 0xff));
  return parts;
}

std::vector<unsigned char> zlib_compress_parallel(std::span<const unsigned char> data, int level, unsigned threads) {
  const auto parts = zlib_compress_units(
      data.size(), 1, [&](std::size_t first, std::size_t count, unsigned char* dst) {
        std::memcpy(dst, data.data() + first, count);
      },
      level, threads);
  std::vector<unsigned char> stream;
  for (const auto& p : parts) stream.insert(stream.end(), p.begin(), p.end());
  return stream;
}

}  // namespace kssim::io
