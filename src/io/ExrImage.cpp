// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/ExrImage.hpp"

#include "io/Error.hpp"

#include <ImfChannelList.h>
#include <ImfContextInit.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfIO.h>
#include <ImfInputFile.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

namespace kssim::io {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("invalid OpenEXR file: " + what); }

// OpenEXR reads through an IStream; this one serves a byte span and throws on reads past its end, as the
// library expects.
class SpanStream : public Imf::IStream {
 public:
  explicit SpanStream(std::span<const std::byte> bytes) : Imf::IStream("input"), bytes_(bytes) {}
  bool read(char c[], int n) override {
    if (n < 0 || std::size_t(n) > bytes_.size() - std::min(position_, bytes_.size()))
      throw std::runtime_error("unexpected end of file");
    std::memcpy(c, bytes_.data() + position_, std::size_t(n));
    position_ += std::size_t(n);
    return position_ < bytes_.size();
  }
  std::uint64_t tellg() override { return position_; }
  void seekg(std::uint64_t pos) override { position_ = std::size_t(std::min<std::uint64_t>(pos, bytes_.size())); }
  std::int64_t size() override { return std::int64_t(bytes_.size()); }

 private:
  std::span<const std::byte> bytes_;
  std::size_t position_ = 0;
};

// The core library reports errors through a callback (by default: printed on stderr) before the C++ layer
// throws: keep the first message of the current decode for io::Error instead.
thread_local char core_message[256];

void on_core_error(exr_const_context_t, exr_result_t, const char* message) {
  if (core_message[0] == '\0' && message) {
    std::strncpy(core_message, message, sizeof core_message - 1);
    core_message[sizeof core_message - 1] = '\0';
  }
}

Imf::ContextInitializer quiet_reader(SpanStream& stream) {
  Imf::ContextInitializer init;
  init.setInputStream(&stream);
  init.setErrorHandler(on_core_error).silentHeaderParse(true).disableChunkReconstruction(true);
  return init;
}

struct Channels {
  const char* names[4];  // colour channels, then alpha if any
  int count;             // 1 to 4, as Image::channels
};

Channels channels_of(const Imf::Header& header) {
  const Imf::ChannelList& list = header.channels();
  auto has = [&](const char* name) {
    const Imf::Channel* c = list.findChannel(name);
    if (c && (c->xSampling != 1 || c->ySampling != 1))
      throw Error(std::string("unsupported OpenEXR file: channel ") + name + " is subsampled");
    return c != nullptr;
  };
  const bool alpha = has("A");
  if (has("R") && has("G") && has("B")) return alpha ? Channels{{"R", "G", "B", "A"}, 4} : Channels{{"R", "G", "B"}, 3};
  if (has("Y")) return alpha ? Channels{{"Y", "A"}, 2} : Channels{{"Y"}, 1};
  std::string names;
  for (auto it = list.begin(); it != list.end(); ++it) names += std::string(names.empty() ? "" : ", ") + it.name();
  throw Error("unsupported OpenEXR file: expected channels R, G, B or Y (and optionally A), found " +
              (names.empty() ? std::string("none") : names));
}

struct Opened {
  SpanStream stream;
  Imf::InputFile file;
  Channels channels;
  int width, height;
  explicit Opened(std::span<const std::byte> bytes)
      : stream(bytes), file("input", quiet_reader(stream), 0), channels(channels_of(file.header())) {
    const Imath::Box2i w = file.header().dataWindow();
    const std::int64_t wide = std::int64_t(w.max.x) - w.min.x + 1, high = std::int64_t(w.max.y) - w.min.y + 1;
    if (wide <= 0 || high <= 0) fail("empty data window");
    check_image_size("OpenEXR", std::uint64_t(wide), std::uint64_t(high), std::uint64_t(channels.count));
    width = int(wide);
    height = int(high);
  }
};

// Runs `body`, turning the library's exceptions (Iex, std) into io::Error.
template <class F>
auto guarded(F body) {
  core_message[0] = '\0';
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    fail(core_message[0] ? std::string(core_message) : std::string(e.what()));
  }
}

}  // namespace

bool looks_like_exr(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 && bytes[0] == std::byte(0x76) && bytes[1] == std::byte(0x2F) &&
         bytes[2] == std::byte(0x31) && bytes[3] == std::byte(0x01);
}

ImageInfo exr_info(std::span<const std::byte> bytes) {
  if (!looks_like_exr(bytes)) fail("missing the OpenEXR magic number");
  return guarded([&] {
    Opened o(bytes);
    return ImageInfo{o.width, o.height, o.channels.count, true};
  });
}

FloatImage decode_exr(std::span<const std::byte> bytes) {
  if (!looks_like_exr(bytes)) fail("missing the OpenEXR magic number");
  return guarded([&] {
    Opened o(bytes);
    if (!o.file.isComplete()) fail("the file is truncated (some pixel data is missing)");
    FloatImage image;
    image.width = o.width;
    image.height = o.height;
    image.channels = o.channels.count;
    image.samples.resize(image.sample_count());
    const Imath::Box2i window = o.file.header().dataWindow();
    const std::size_t pixel = sizeof(float) * std::size_t(image.channels);
    Imf::FrameBuffer frame;
    for (int c = 0; c < image.channels; ++c)
      frame.insert(o.channels.names[c], Imf::Slice::Make(Imf::FLOAT, image.samples.data() + c, window, pixel,
                                                         pixel * std::size_t(image.width)));
    o.file.setFrameBuffer(frame);
    o.file.readPixels(window.min.y, window.max.y);
    return image;
  });
}

}  // namespace kssim::io
