#pragma once
// A zlib stream (RFC 1950) compressed by several threads, as pigz does: the input is cut into one piece
// per thread, each piece is deflated on its own (raw deflate ending in a sync flush, the last one finishing
// the stream) and the pieces are concatenated, with the Adler-32 checksums combined. The result is one
// ordinary zlib stream that any inflater reads; each piece starts with an empty dictionary, which costs a
// few hundred bytes per piece.

#include <cstddef>
#include <span>
#include <vector>

namespace kssim::io {

// Compresses `data` at zlib `level` (0 to 9) with up to `threads` threads (at least 1; pieces of less than
// 1 MiB are not worth a thread). Throws io::Error if zlib fails.
std::vector<unsigned char> zlib_compress_parallel(std::span<const unsigned char> data, int level, unsigned threads);

}  // namespace kssim::io
