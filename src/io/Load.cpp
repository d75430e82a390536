#include "io/Load.hpp"

#include "io/Error.hpp"
#include "io/File.hpp"
#include "io/Npy.hpp"
#include "io/PngImage.hpp"
#include "io/PnmImage.hpp"

namespace kssim::io {

const char* format_name(Format format) {
  switch (format) {
    case Format::Npy: return "npy";
    case Format::Png: return "png";
    case Format::Pnm: return "pnm";
  }
  return "?";
}

LoadedArray load_array(std::span<const std::byte> bytes) {
  if (bytes.empty()) throw Error("the file is empty");
  if (looks_like_npy(bytes)) return {parse_npy(bytes), Format::Npy};
  if (looks_like_png(bytes)) return {image_to_array(decode_png(bytes)), Format::Png};
  if (looks_like_pnm(bytes)) return {image_to_array(decode_pnm(bytes)), Format::Pnm};
  throw Error("unrecognised file format (expected a .npy array or a PNG, PGM or PPM image)");
}

LoadedArray load_array_file(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_file(path);
  return load_array(bytes);
}

}  // namespace kssim::io
