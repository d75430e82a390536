// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/Load.hpp"

#include "io/Error.hpp"
#include "io/ExrImage.hpp"
#include "io/File.hpp"
#include "io/JpegImage.hpp"
#include "io/Npy.hpp"
#include "io/PfmImage.hpp"
#include "io/PngImage.hpp"
#include "io/PnmImage.hpp"
#include "io/TiffImage.hpp"
#include "io/WebpImage.hpp"

namespace kssim::io {
namespace {

template <class AnyImage>
LoadedArray loaded(const AnyImage& image, Format format) {
  return {image_to_array(image), format, image.has_alpha(), std::is_same_v<AnyImage, Image>};
}

ArrayInfo info_of(const ImageInfo& i, Format format) {
  const bool alpha = i.channels == 2 || i.channels == 4;
  return {format, DType::Float32,
          {1, std::size_t(alpha ? i.channels - 1 : i.channels), std::size_t(i.height), std::size_t(i.width)},
          alpha};
}

ArrayInfo info_of(const LoadedArray& l) { return {l.format, l.array.dtype(), l.array.shape, l.alpha, l.widened}; }

[[noreturn]] void unknown() {
  throw Error("unrecognised file format (expected a .npy array or a PNG, PGM/PPM, JPEG, TIFF, WebP, OpenEXR or "
              "PFM image)");
}

}  // namespace

const char* format_name(Format format) {
  switch (format) {
    case Format::Npy: return "npy";
    case Format::Png: return "png";
    case Format::Pnm: return "pnm";
    case Format::Jpeg: return "jpeg";
    case Format::Tiff: return "tiff";
    case Format::Webp: return "webp";
    case Format::Exr: return "exr";
    case Format::Pfm: return "pfm";
  }
  return "?";
}

LoadedArray load_array(std::span<const std::byte> bytes) {
  if (bytes.empty()) throw Error("the file is empty");
  if (looks_like_npy(bytes)) {
    LoadedArray l{parse_npy(bytes), Format::Npy};
    l.widened = npy_info(bytes).dtype == DType::Float16;  // the header again: parse_npy returns float32 for it
    return l;
  }
  if (looks_like_png(bytes)) return loaded(decode_png(bytes), Format::Png);
  if (looks_like_pnm(bytes)) return loaded(decode_pnm(bytes), Format::Pnm);
  if (looks_like_pfm(bytes)) return loaded(decode_pfm(bytes), Format::Pfm);
  if (looks_like_jpeg(bytes)) return loaded(decode_jpeg(bytes), Format::Jpeg);
  if (looks_like_webp(bytes)) return loaded(decode_webp(bytes), Format::Webp);
  if (looks_like_exr(bytes)) return loaded(decode_exr(bytes), Format::Exr);
  if (looks_like_tiff(bytes))
    return std::visit([](const auto& image) { return loaded(image, Format::Tiff); }, decode_tiff(bytes));
  unknown();
}

ArrayInfo probe_array(std::span<const std::byte> bytes) {
  if (bytes.empty()) throw Error("the file is empty");
  if (looks_like_npy(bytes)) {
    NpyInfo n = npy_info(bytes);
    const bool half = n.dtype == DType::Float16;
    return {Format::Npy, half ? DType::Float32 : n.dtype, std::move(n.shape), false, half};
  }
  if (looks_like_png(bytes)) return info_of(png_info(bytes), Format::Png);
  if (looks_like_jpeg(bytes)) return info_of(jpeg_info(bytes), Format::Jpeg);
  if (looks_like_webp(bytes)) return info_of(webp_info(bytes), Format::Webp);
  if (looks_like_exr(bytes)) return info_of(exr_info(bytes), Format::Exr);
  if (looks_like_tiff(bytes)) return info_of(tiff_info(bytes), Format::Tiff);
  if (looks_like_pnm(bytes) || looks_like_pfm(bytes)) return info_of(load_array(bytes));
  unknown();
}

LoadedArray load_array_file(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_file(path);
  return load_array(bytes);
}

}  // namespace kssim::io
