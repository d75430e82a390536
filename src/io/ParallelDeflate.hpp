// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A zlib stream (RFC 1950) compressed by several threads, as pigz does: the input is cut into pieces (a
// few per thread), each piece is deflated on its own (raw deflate ending in a sync flush, the last one finishing
// the stream), and the Adler-32 checksums of the pieces are combined. The concatenation of the pieces'
// outputs is one ordinary zlib stream that any inflater reads; each piece starts with an empty dictionary,
// which costs a few hundred bytes per piece.
//
// The input is produced, not given: each thread asks a writer for the next few units (e.g. rows of a
// picture) into a small buffer and deflates them, so the whole uncompressed data never exists in memory
// (for the map PNG of a 4K RGB pair that would be 74 MB of freshly faulted pages, a fifth of its cost).

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace kssim::io {

// Writes units [first, first + count) into dst, count * unit_bytes bytes. Called from several threads at
// once, on disjoint ranges.
using UnitWriter = std::function<void(std::size_t first, std::size_t count, unsigned char* dst)>;

// Deflates `units` units of `unit_bytes` bytes each at zlib `level` (0 to 9) with up to `threads` threads
// (at least 1; pieces of less than 1 MiB are not worth it). Returns the stream in consecutive parts, one
// per piece: the zlib header is at the start of the first, the Adler-32 at the end of the last. Throws
// io::Error if zlib fails.
std::vector<std::vector<unsigned char>> zlib_compress_units(std::size_t units, std::size_t unit_bytes,
                                                            const UnitWriter& write, int level, unsigned threads);

// The same for data held in memory, as one contiguous stream.
std::vector<unsigned char> zlib_compress_parallel(std::span<const unsigned char> data, int level, unsigned threads);

}  // namespace kssim::io
