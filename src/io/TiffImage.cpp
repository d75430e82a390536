// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/TiffImage.hpp"

#include "io/Error.hpp"

#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace kssim::io {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("invalid TIFF file: " + what); }
[[noreturn]] void unsupported(const std::string& what) { throw Error("unsupported TIFF file: " + what); }

// ---- libtiff reading from memory, with errors collected per handle instead of printed ----

struct Source {
  const std::byte* data;
  std::size_t size;
  std::size_t position;
  char message[256];
};

tmsize_t on_read(thandle_t h, void* out, tmsize_t n) {
  auto* s = static_cast<Source*>(h);
  if (n < 0) return -1;
  const std::size_t count = std::min(std::size_t(n), s->size - std::min(s->position, s->size));
  if (count) std::memcpy(out, s->data + s->position, count);
  s->position += count;
  return tmsize_t(count);
}
tmsize_t on_write(thandle_t, void*, tmsize_t) { return -1; }
toff_t on_seek(thandle_t h, toff_t offset, int whence) {
  auto* s = static_cast<Source*>(h);
  std::uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->position : s->size;
  if (offset > UINT64_MAX - base) return toff_t(-1);
  s->position = std::size_t(std::min<std::uint64_t>(base + offset, SIZE_MAX));
  return toff_t(s->position);
}
int on_close(thandle_t) { return 0; }
toff_t on_size(thandle_t h) { return toff_t(static_cast<Source*>(h)->size); }
int on_map(thandle_t, void**, toff_t*) { return 0; }
void on_unmap(thandle_t, void*, toff_t) {}

int on_error(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* s = static_cast<Source*>(user);
  if (s->message[0] == '\0') {  // keep the first error: later ones are usually consequences
    int n = module ? std::snprintf(s->message, sizeof s->message, "%s: ", module) : 0;
    if (n < 0 || n >= int(sizeof s->message)) n = 0;
    std::vsnprintf(s->message + n, sizeof s->message - std::size_t(n), format, args);
  }
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }  // silenced

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};
struct OptionsFree {
  void operator()(TIFFOpenOptions* o) const { TIFFOpenOptionsFree(o); }
};

std::unique_ptr<TIFF, TiffCloser> open(Source& source) {
  std::unique_ptr<TIFFOpenOptions, OptionsFree> options(TIFFOpenOptionsAlloc());
  if (!options) throw Error("cannot initialise libtiff");
  TIFFOpenOptionsSetErrorHandlerExtR(options.get(), on_error, &source);
  TIFFOpenOptionsSetWarningHandlerExtR(options.get(), on_warning, &source);
  // No single buffer (a strip, a tile, a tag array) larger than the whole decoded image can be.
  TIFFOpenOptionsSetMaxSingleMemAlloc(options.get(), tmsize_t(std::min<std::uint64_t>(max_image_samples * 4, INT64_MAX)));
  // "m": no memory mapping (our callbacks serve the bytes).
  std::unique_ptr<TIFF, TiffCloser> tif(TIFFClientOpenExt("input", "rm", &source, on_read, on_write, on_seek,
                                                          on_close, on_size, on_map, on_unmap, options.get()));
  if (!tif) fail(source.message[0] ? source.message : "cannot read the header");
  return tif;
}

struct Layout {
  std::uint32_t width = 0, height = 0;
  std::uint16_t samples = 1, bits = 1, format = SAMPLEFORMAT_UINT, photometric = 0, planar = PLANARCONFIG_CONTIG;
};

Layout layout_of(TIFF* tif, Source& source) {
  Layout l;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &l.width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &l.height))
    fail("missing the image width or length");
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l.photometric)) fail("missing the photometric interpretation");
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &l.samples);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &l.bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &l.format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &l.planar);
  if (source.message[0]) fail(source.message);
  const bool gray = l.photometric == PHOTOMETRIC_MINISBLACK || l.photometric == PHOTOMETRIC_MINISWHITE;
  if (!gray && l.photometric != PHOTOMETRIC_RGB)
    unsupported("photometric interpretation " + std::to_string(l.photometric) +
                " (only gray and RGB are supported; palette, YCbCr, CMYK and Lab are not)");
  if (gray && l.samples != 1 && l.samples != 2)
    unsupported("a gray image with " + std::to_string(l.samples) + " samples per pixel");
  if (!gray && l.samples != 3 && l.samples != 4)
    unsupported("an RGB image with " + std::to_string(l.samples) + " samples per pixel");
  const bool integer = l.format == SAMPLEFORMAT_UINT && (l.bits == 8 || l.bits == 16);
  const bool floating = l.format == SAMPLEFORMAT_IEEEFP && l.bits == 32;
  if (!integer && !floating)
    unsupported(std::to_string(l.bits) + "-bit samples of format " + std::to_string(l.format) +
                " (8- and 16-bit unsigned integers and 32-bit floats are supported)");
  if (l.photometric == PHOTOMETRIC_MINISWHITE && floating) unsupported("min-is-white float samples");
  if (l.planar != PLANARCONFIG_CONTIG && l.planar != PLANARCONFIG_SEPARATE) fail("bad planar configuration");
  check_image_size("TIFF", l.width, l.height, l.samples);
  return l;
}

// The largest strip or tile larger than the image itself that is read (1024x1024 RGBA float tiles fit).
constexpr std::size_t max_unit_bytes = std::size_t(16) << 20;

// Copies every strip or tile (each a rectangle of `unit_w` x `unit_h` pixels holding all samples when the
// planes are contiguous, one sample otherwise) into interleaved (H, W, samples) order.
template <class T>
std::vector<T> read_samples(TIFF* tif, Source& source, const Layout& l) {
  const std::size_t w = l.width, h = l.height, spp = l.samples;
  std::vector<T> out(w * h * spp);
  const bool tiled = TIFFIsTiled(tif);
  std::uint32_t unit_w = l.width, unit_h = 0;
  if (tiled) {
    if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &unit_w) || !TIFFGetField(tif, TIFFTAG_TILELENGTH, &unit_h))
      fail("missing the tile size");
  } else {
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &unit_h);
    unit_h = std::min(unit_h, l.height);
  }
  if (unit_w == 0 || unit_h == 0) fail("zero tile or strip size");
  const std::size_t unit_spp = l.planar == PLANARCONFIG_CONTIG ? spp : 1;
  const std::size_t unit_bytes = std::size_t(unit_w) * unit_h * unit_spp * sizeof(T);
  const tmsize_t lib_bytes = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
  if (lib_bytes <= 0 || std::size_t(lib_bytes) < unit_bytes) fail(source.message[0] ? source.message : "bad strip or tile size");
  // The tile size is a header field that nothing ties to the image size: a few bytes can announce a 1x1 image
  // in 100 GB tiles. Tiles pad the image's edges, so one may exceed the image, but not past max_unit_bytes.
  const std::size_t plane_bytes = w * h * unit_spp * sizeof(T);
  if (std::size_t(lib_bytes) > std::max(plane_bytes, max_unit_bytes))
    unsupported("a " + std::to_string(unit_w) + "x" + std::to_string(unit_h) + " " + (tiled ? "tile" : "strip") +
                " of " + std::to_string(lib_bytes) + " bytes for a " + std::to_string(l.width) + "x" +
                std::to_string(l.height) + " image (at most the image's size or 16 MiB)");
  std::vector<unsigned char> buffer(static_cast<std::size_t>(lib_bytes));
  const std::size_t planes = l.planar == PLANARCONFIG_CONTIG ? 1 : spp;
  for (std::size_t plane = 0; plane < planes; ++plane) {
    for (std::size_t y0 = 0; y0 < h; y0 += unit_h) {
      for (std::size_t x0 = 0; x0 < w; x0 += unit_w) {
        const std::size_t rows = std::min<std::size_t>(unit_h, h - y0), cols = std::min<std::size_t>(unit_w, w - x0);
        tmsize_t got;
        if (tiled) {
          got = TIFFReadTile(tif, buffer.data(), std::uint32_t(x0), std::uint32_t(y0), 0, std::uint16_t(plane));
        } else {
          const std::uint32_t strip = TIFFComputeStrip(tif, std::uint32_t(y0), std::uint16_t(plane));
          got = TIFFReadEncodedStrip(tif, strip, buffer.data(), lib_bytes);
        }
        // A strip's last rows may be missing from the last strip only; tiles are always whole.
        const std::size_t needed = ((rows - 1) * unit_w + cols) * unit_spp * sizeof(T);
        if (got < 0 || std::size_t(got) < needed || source.message[0])
          fail(source.message[0] ? source.message : "truncated strip or tile");
        for (std::size_t y = 0; y < rows; ++y)
          for (std::size_t x = 0; x < cols; ++x)
            for (std::size_t s = 0; s < unit_spp; ++s) {
              T v;
              std::memcpy(&v, buffer.data() + ((y * unit_w + x) * unit_spp + s) * sizeof(T), sizeof(T));
              out[((y0 + y) * w + x0 + x) * spp + (planes == 1 ? s : plane)] = v;
            }
      }
    }
  }
  return out;
}

}  // namespace

bool looks_like_tiff(std::span<const std::byte> bytes) {
  if (bytes.size() < 4) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  return (b[0] == 'I' && b[1] == 'I' && (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
         (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43));
}

ImageInfo tiff_info(std::span<const std::byte> bytes) {
  if (!looks_like_tiff(bytes)) fail("missing the TIFF header");
  Source source{bytes.data(), bytes.size(), 0, ""};
  auto tif = open(source);
  const Layout l = layout_of(tif.get(), source);
  return ImageInfo{int(l.width), int(l.height), int(l.samples), l.format == SAMPLEFORMAT_IEEEFP};
}

std::variant<Image, FloatImage> decode_tiff(std::span<const std::byte> bytes) {
  if (!looks_like_tiff(bytes)) fail("missing the TIFF header");
  Source source{bytes.data(), bytes.size(), 0, ""};
  auto tif = open(source);
  const Layout l = layout_of(tif.get(), source);
  if (!TIFFLastDirectory(tif.get())) unsupported("multi-page files (only the first image would be read)");
  if (l.format == SAMPLEFORMAT_IEEEFP) {
    FloatImage image;
    image.width = int(l.width);
    image.height = int(l.height);
    image.channels = l.samples;
    image.samples = read_samples<float>(tif.get(), source, l);
    return image;
  }
  Image image;
  image.width = int(l.width);
  image.height = int(l.height);
  image.channels = l.samples;
  image.max_value = l.bits == 16 ? 65535 : 255;
  if (l.bits == 16) {
    image.samples = read_samples<std::uint16_t>(tif.get(), source, l);
  } else {
    const std::vector<std::uint8_t> s = read_samples<std::uint8_t>(tif.get(), source, l);
    image.samples.assign(s.begin(), s.end());
  }
  if (l.photometric == PHOTOMETRIC_MINISWHITE)  // 0 is white: flip so that larger means brighter, as elsewhere
    for (std::size_t k = 0; k < image.samples.size(); k += std::size_t(l.samples))
      image.samples[k] = std::uint16_t(image.max_value - image.samples[k]);
  return image;
}

}  // namespace kssim::io
