// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/JpegImage.hpp"

#include "io/Error.hpp"

#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <jpeglib.h>
#include <jerror.h>  // the JWRN_ message codes

#include <csetjmp>
#include <string>

// libjpeg reports errors by calling error_exit, which must not return: it longjmps back here. As in
// PngImage.cpp, the functions that call libjpeg after setjmp hold only trivially destructible locals; every
// C++ object lives in the callers.

namespace kssim::io {
namespace {

struct ErrorState {
  jpeg_error_mgr manager;  // first member: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = "";
};

void on_error(j_common_ptr cinfo) {
  auto* state = reinterpret_cast<ErrorState*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, state->message);
  std::longjmp(state->jump, 1);
}

// Warnings (level -1) about corrupt data mean libjpeg goes on with made-up pixels: fail instead. Trace
// messages (level >= 0) are ignored.
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA) on_error(cinfo);
}

struct Decoder {
  jpeg_decompress_struct cinfo{};
  ErrorState errors;
  bool created = false;
  Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

[[noreturn]] void fail(const std::string& what) { throw Error("invalid JPEG file: " + what); }

// Creates the decompressor and reads the header; false on a libjpeg error (message in d.errors).
bool read_header(Decoder& d, std::span<const std::byte> bytes) {
  d.cinfo.err = jpeg_std_error(&d.errors.manager);
  d.errors.manager.error_exit = on_error;
  d.errors.manager.emit_message = on_message;
  if (setjmp(d.errors.jump)) return false;
  jpeg_create_decompress(&d.cinfo);
  d.created = true;
  jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&d.cinfo, TRUE);
  return true;
}

bool read_pixels(Decoder& d, unsigned char* out, std::size_t row_bytes) {
  if (setjmp(d.errors.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    JSAMPROW row = out + std::size_t(d.cinfo.output_scanline) * row_bytes;
    jpeg_read_scanlines(&d.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&d.cinfo);
  return true;
}

ImageInfo header(Decoder& d, std::span<const std::byte> bytes) {
  if (!looks_like_jpeg(bytes)) fail("missing the JPEG start-of-image marker");
  if (!read_header(d, bytes)) fail(d.errors.message);
  const int components = d.cinfo.num_components;
  if (components != 1 && components != 3)
    fail("only gray and YCbCr/RGB JPEG files are supported, this one has " + std::to_string(components) +
         " components (CMYK?)");
  if (d.cinfo.data_precision != 8) fail("only 8-bit JPEG files are supported");
  check_image_size("JPEG", d.cinfo.image_width, d.cinfo.image_height, std::uint64_t(components));
  return ImageInfo{int(d.cinfo.image_width), int(d.cinfo.image_height), components, false};
}

}  // namespace

bool looks_like_jpeg(std::span<const std::byte> bytes) {
  return bytes.size() >= 3 && bytes[0] == std::byte(0xFF) && bytes[1] == std::byte(0xD8) && bytes[2] == std::byte(0xFF);
}

ImageInfo jpeg_info(std::span<const std::byte> bytes) {
  Decoder d;
  return header(d, bytes);
}

Image decode_jpeg(std::span<const std::byte> bytes) {
  Decoder d;
  const ImageInfo info = header(d, bytes);
  d.cinfo.out_color_space = info.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  const std::size_t row_bytes = std::size_t(info.width) * std::size_t(info.channels);
  std::vector<unsigned char> pixels(row_bytes * std::size_t(info.height));
  if (!read_pixels(d, pixels.data(), row_bytes)) fail(d.errors.message);
  if (int(d.cinfo.output_components) != info.channels) fail("unexpected number of output components");
  return eight_bit_image(info, pixels);
}

}  // namespace kssim::io
