// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/PngImage.hpp"

#include "io/Error.hpp"
#include "io/ParallelDeflate.hpp"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <thread>
#include <type_traits>
#include <cstring>

// libpng reports errors by longjmp. Every function below that calls into libpng after setjmp holds only
// trivially destructible locals, and all C++ objects (vectors, strings) live in the callers, so no
// destructor is ever skipped. The callbacks never throw.

namespace kssim::io {
namespace {

struct ErrorState {
  char message[200] = "";
  bool crc_warning = false;  // libpng only warns about some CRC errors (e.g. the last IDAT's): we fail on them
};

void on_error(png_structp png, png_const_charp message) {
  auto* state = static_cast<ErrorState*>(png_get_error_ptr(png));
  if (state) {
    std::strncpy(state->message, message ? message : "unknown libpng error", sizeof(state->message) - 1);
    state->message[sizeof(state->message) - 1] = '\0';
  }
  png_longjmp(png, 1);
}

void on_warning(png_structp png, png_const_charp message) {
  auto* state = static_cast<ErrorState*>(png_get_error_ptr(png));
  if (state && message && std::strstr(message, "CRC") && !state->crc_warning) {
    state->crc_warning = true;
    std::strncpy(state->message, message, sizeof(state->message) - 1);
    state->message[sizeof(state->message) - 1] = '\0';
  }
}

// ---- reading ----

struct ReadSource {
  const unsigned char* data;
  std::size_t size;
  std::size_t position;
};

void on_read(png_structp png, png_bytep out, std::size_t length) {
  auto* src = static_cast<ReadSource*>(png_get_io_ptr(png));
  if (src->size - src->position < length) png_error(png, "the file is truncated");
  std::memcpy(out, src->data + src->position, length);
  src->position += length;
}

// One libpng read (IO = ReadSource) or write (WriteSink): its structs, destroyed with it, its error state and
// where the bytes come from or go.
template <class IO>
struct PngSession {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ErrorState errors;
  IO io{};
  PngSession() = default;
  PngSession(const PngSession&) = delete;
  PngSession& operator=(const PngSession&) = delete;
  ~PngSession() {
    if constexpr (std::is_same_v<IO, ReadSource>)
      png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    else
      png_destroy_write_struct(&png, info ? &info : nullptr);
  }
};
using Reader = PngSession<ReadSource>;

struct Layout {
  png_uint_32 width, height;
  int bit_depth, channels;
  std::size_t row_bytes;
  bool gray_palette;  // a palette whose every entry is gray: decoded to RGB, returned as gray
};

bool read_header(Reader& r, Layout& layout) {
  if (setjmp(png_jmpbuf(r.png))) return false;
  png_set_user_limits(r.png, 1u << 24, 1u << 24);
  png_set_crc_action(r.png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);  // corrupt chunks of any kind are errors
  png_read_info(r.png, r.info);
  const int color_type = png_get_color_type(r.png, r.info);
  const int depth = png_get_bit_depth(r.png, r.info);
  layout.gray_palette = false;
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_colorp palette = nullptr;
    int entries = 0;
    if (png_get_PLTE(r.png, r.info, &palette, &entries) && entries > 0) {
      layout.gray_palette = true;
      for (int i = 0; i < entries; ++i)
        layout.gray_palette = layout.gray_palette && palette[i].red == palette[i].green &&
                              palette[i].green == palette[i].blue;
    }
    png_set_palette_to_rgb(r.png);
  }
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(r.png);
  png_set_interlace_handling(r.png);
  png_read_update_info(r.png, r.info);
  layout.width = png_get_image_width(r.png, r.info);
  layout.height = png_get_image_height(r.png, r.info);
  layout.bit_depth = png_get_bit_depth(r.png, r.info);
  layout.channels = png_get_channels(r.png, r.info);
  layout.row_bytes = png_get_rowbytes(r.png, r.info);
  return true;
}

bool read_rows(Reader& r, png_bytepp rows) {
  if (setjmp(png_jmpbuf(r.png))) return false;
  png_read_image(r.png, rows);
  png_read_end(r.png, nullptr);
  return true;
}

// ---- writing ----

struct WriteSink {
  std::vector<std::byte>* out;
  bool failed;
};

void on_write(png_structp png, png_bytep data, std::size_t length) {
  auto* sink = static_cast<WriteSink*>(png_get_io_ptr(png));
  if (sink->failed) return;
  try {
    sink->out->insert(sink->out->end(), reinterpret_cast<const std::byte*>(data),
                      reinterpret_cast<const std::byte*>(data) + length);
  } catch (...) {
    sink->failed = true;
  }
}

void on_flush(png_structp) {}

using Writer = PngSession<WriteSink>;

void set_header(Writer& w, const Image& image, png_textp text, int text_count) {
  static const int color_types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_IHDR(w.png, w.info, png_uint_32(image.width), png_uint_32(image.height), image.max_value > 255 ? 16 : 8,
               color_types[image.channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (text_count > 0) png_set_text(w.png, w.info, text, text_count);
}

bool write_all(Writer& w, const Image& image, png_bytepp rows, png_textp text, int text_count) {
  if (setjmp(png_jmpbuf(w.png))) return false;
  set_header(w, image, text, text_count);
  png_set_rows(w.png, w.info, rows);
  png_write_png(w.png, w.info, PNG_TRANSFORM_IDENTITY, nullptr);
  return true;
}

// The fast path: libpng writes the signature, IHDR and text chunks; the image data, a zlib stream in parts
// (zlib_compress_units), goes into IDAT chunks of at most 1 MiB, then IEND.
bool write_compressed(Writer& w, const Image& header, png_textp text, int text_count,
                      const std::vector<std::vector<unsigned char>>& parts) {
  if (setjmp(png_jmpbuf(w.png))) return false;
  set_header(w, header, text, text_count);
  png_write_info(w.png, w.info);
  static const png_byte idat[5] = "IDAT", iend[5] = "IEND";
  for (const auto& part : parts)
    for (std::size_t at = 0; at < part.size(); at += std::size_t(1) << 20)
      png_write_chunk(w.png, idat, part.data() + at, std::min(part.size() - at, std::size_t(1) << 20));
  png_write_chunk(w.png, iend, nullptr, 0);
  return true;
}

[[noreturn]] void fail(const std::string& what) { throw Error("invalid PNG file: " + what); }

}  // namespace

bool looks_like_png(std::span<const std::byte> bytes) {
  return bytes.size() >= 8 && png_sig_cmp(reinterpret_cast<png_const_bytep>(bytes.data()), 0, 8) == 0;
}

namespace {

void open_reader(Reader& r, std::span<const std::byte> bytes, Layout& layout) {
  if (!looks_like_png(bytes)) fail("missing the PNG signature");
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r.errors, on_error, on_warning);
  if (!r.png) throw Error("cannot initialise libpng");
  r.info = png_create_info_struct(r.png);
  if (!r.info) throw Error("cannot initialise libpng");
  r.io = ReadSource{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0};
  png_set_read_fn(r.png, &r.io, on_read);
  if (!read_header(r, layout) || r.errors.crc_warning) fail(r.errors.message);
}

int channels_out(const Layout& layout) { return layout.gray_palette ? layout.channels - 2 : layout.channels; }

}  // namespace

ImageInfo png_info(std::span<const std::byte> bytes) {
  Reader r;
  Layout layout{};
  open_reader(r, bytes, layout);
  if (layout.channels < 1 || layout.channels > 4) fail("unexpected channel count");
  return ImageInfo{int(layout.width), int(layout.height), channels_out(layout), false};
}

Image decode_png(std::span<const std::byte> bytes) {
  Reader r;
  Layout layout{};
  open_reader(r, bytes, layout);
  if (layout.bit_depth != 8 && layout.bit_depth != 16) fail("unexpected bit depth after expansion");
  if (layout.channels < 1 || layout.channels > 4) fail("unexpected channel count");
  const std::size_t raw = layout.row_bytes * layout.height;
  // Deflate cannot compress better than about 1032:1, so a larger raw size means a corrupt file; checking
  // it first keeps a tiny malicious file from allocating gigabytes.
  if (layout.row_bytes != 0 && raw / layout.row_bytes != layout.height) fail("the image is too large");
  if (raw > 1100 * bytes.size() + 4096) fail("the image data is too short for the announced size");
  if (std::uint64_t(layout.width) * layout.height * std::uint64_t(layout.channels) > (1ull << 30))
    fail("the image is too large (more than 2^30 samples)");

  std::vector<unsigned char> pixels(raw);
  std::vector<png_bytep> rows(layout.height);
  for (png_uint_32 y = 0; y < layout.height; ++y) rows[y] = pixels.data() + std::size_t(y) * layout.row_bytes;
  if (!read_rows(r, rows.data()) || r.errors.crc_warning) fail(r.errors.message);

  Image image;
  image.width = int(layout.width);
  image.height = int(layout.height);
  image.channels = channels_out(layout);
  image.max_value = layout.bit_depth == 16 ? 65535 : 255;
  image.samples.resize(image.sample_count());
  // A gray palette decoded to RGB(A) keeps R (= G = B) and alpha: source sample s goes to output k.
  const std::size_t in_channels = std::size_t(layout.channels), out_channels = std::size_t(image.channels);
  const std::size_t pixels_per_row = std::size_t(layout.width);
  for (std::size_t y = 0; y < layout.height; ++y) {
    const unsigned char* row = rows[y];
    std::uint16_t* dst = image.samples.data() + y * pixels_per_row * out_channels;
    if (out_channels == in_channels) {  // the common case, kept a tight loop
      const std::size_t n = pixels_per_row * in_channels;
      if (layout.bit_depth == 16) {
        for (std::size_t k = 0; k < n; ++k) dst[k] = std::uint16_t((row[2 * k] << 8) | row[2 * k + 1]);
      } else {
        for (std::size_t k = 0; k < n; ++k) dst[k] = row[k];
      }
      continue;
    }
    for (std::size_t x = 0; x < pixels_per_row; ++x)  // gray palette: 8 bits, R then alpha
      for (std::size_t k = 0; k < out_channels; ++k) dst[x * out_channels + k] = row[x * in_channels + (k == 0 ? 0 : 3)];
  }
  return image;
}

namespace {

void check_text(const PngText& text) {
  for (const auto& [key, value] : text)
    if (key.empty() || key.size() > 79) throw Error("PNG text keywords must have 1 to 79 characters");
}

// libpng's writer with the text chunks, writing into `out`; write(w, chunks, count) -> false on a libpng error.
template <class Write>
std::vector<std::byte> write_png(const PngText& text, const Write& write) {
  std::vector<std::string> keys, values;  // owned copies: png_text takes non-const char*
  for (const auto& [key, value] : text) {
    keys.push_back(key);
    values.push_back(value);
  }
  std::vector<png_text> chunks(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    chunks[i] = png_text{};
    chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
    chunks[i].key = keys[i].data();
    chunks[i].text = values[i].data();
    chunks[i].text_length = values[i].size();
  }
  std::vector<std::byte> out;
  Writer w;
  w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w.errors, on_error, on_warning);
  if (!w.png) throw Error("cannot initialise libpng");
  w.info = png_create_info_struct(w.png);
  if (!w.info) throw Error("cannot initialise libpng");
  w.io = WriteSink{&out, false};
  png_set_write_fn(w.png, &w.io, on_write, on_flush);
  if (!write(w, &out, chunks.data(), int(chunks.size()))) throw Error(std::string("cannot encode PNG: ") + w.errors.message);
  if (w.io.failed) throw Error("cannot encode PNG: out of memory");
  return out;
}

}  // namespace

std::vector<std::byte> encode_png(const Image& image, const PngText& text) {
  check_image(image);
  if (image.max_value != 255 && image.max_value != 65535)
    throw Error("PNG images must have a maximum sample value of 255 or 65535");
  check_text(text);
  const bool wide = image.max_value > 255;
  const std::size_t per_row = std::size_t(image.width) * std::size_t(image.channels);
  const std::size_t row_bytes = per_row * (wide ? 2 : 1);
  std::vector<unsigned char> pixels(row_bytes * std::size_t(image.height));
  for (std::size_t k = 0; k < pixels.size() / (wide ? 2 : 1); ++k) {
    if (wide) {
      pixels[2 * k] = static_cast<unsigned char>(image.samples[k] >> 8);
      pixels[2 * k + 1] = static_cast<unsigned char>(image.samples[k] & 0xff);
    } else {
      pixels[k] = static_cast<unsigned char>(image.samples[k]);
    }
  }
  std::vector<png_bytep> rows(std::size_t(image.height));
  for (std::size_t y = 0; y < rows.size(); ++y) rows[y] = pixels.data() + y * row_bytes;
  return write_png(text, [&](Writer& w, std::vector<std::byte>*, png_textp chunks, int count) {
    return write_all(w, image, rows.data(), chunks, count);
  });
}

std::vector<std::byte> encode_png_rows(const PngRows& layout, const PngText& text) {
  if (layout.width < 1 || layout.height < 1 || layout.width > (1 << 24) || layout.height > (1 << 24) ||
      layout.channels < 1 || layout.channels > 4 || (layout.bit_depth != 8 && layout.bit_depth != 16))
    throw Error("cannot encode PNG: invalid size, channel count or bit depth");
  check_text(text);
  Image header;  // what set_header reads: no samples
  header.width = layout.width;
  header.height = layout.height;
  header.channels = layout.channels;
  header.max_value = layout.bit_depth == 16 ? 65535 : 255;
  const std::size_t pixel_bytes = std::size_t(layout.channels) * std::size_t(layout.bit_depth / 8);
  const std::size_t row_bytes = std::size_t(layout.width) * pixel_bytes;
  // Each unit is a filtered row: the Sub filter (type 1), each byte minus the byte of the same sample one
  // pixel to the left (cheap, and it turns the map's flat runs into zeros).
  const auto filtered = [&](std::size_t first, std::size_t count, unsigned char* dst) {
    for (std::size_t y = first; y < first + count; ++y, dst += row_bytes + 1) {
      dst[0] = 1;
      unsigned char* bytes = dst + 1;
      layout.write_row(y, bytes);
      for (std::size_t k = row_bytes; k-- > pixel_bytes;) bytes[k] = static_cast<unsigned char>(bytes[k] - bytes[k - pixel_bytes]);
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto parts = zlib_compress_units(std::size_t(layout.height), row_bytes + 1, filtered, 1, threads);
  return write_png(text, [&](Writer& w, std::vector<std::byte>* out, png_textp chunks, int count) {
    std::size_t size = 1024;  // signature, header and IEND chunks
    for (const auto& [key, value] : text) size += key.size() + value.size() + 13;
    for (const auto& part : parts) size += part.size() + 12 * (part.size() / (std::size_t(1) << 20) + 1);
    out->reserve(size);  // the file grows in place
    return write_compressed(w, header, chunks, count, parts);
  });
}

}  // namespace kssim::io
