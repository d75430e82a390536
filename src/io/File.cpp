// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "io/File.hpp"

#include "io/Error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <system_error>

namespace kssim::io {
namespace {

std::string reason(int err) { return std::error_code(err, std::generic_category()).message(); }

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

std::filesystem::path temporary_name(const std::filesystem::path& target) {
  static std::mt19937_64 rng{std::random_device{}()};
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx.tmp", static_cast<unsigned long long>(rng()));
  std::filesystem::path tmp = target;
  tmp.replace_filename("." + target.filename().string() + suffix);
  return tmp;
}

std::vector<std::byte> read_all(std::FILE* f, const std::string& name) {
  std::vector<std::byte> bytes;
  std::byte buffer[1 << 16];
  errno = 0;
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, f);
    bytes.insert(bytes.end(), buffer, buffer + got);
    if (got < sizeof buffer) break;
  }
  if (std::ferror(f)) throw Error("cannot read " + name + ": " + reason(errno));
  return bytes;
}

}  // namespace

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  if (path == stdin_path) return read_all(stdin, "the standard input");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read '" + path.string() + "': it is a directory");
  errno = 0;
  FilePtr f(std::fopen(path.string().c_str(), "rb"));
  if (!f) throw Error("cannot open '" + path.string() + "': " + reason(errno));
  return read_all(f.get(), "'" + path.string() + "'");
}

void write_files(const std::vector<OutputFile>& files) {
  std::vector<std::filesystem::path> temporaries;
  auto discard = [&] {
    std::error_code ignored;
    for (const auto& t : temporaries) std::filesystem::remove(t, ignored);
  };
  for (const OutputFile& file : files) {
    const std::filesystem::path tmp = temporary_name(file.path);
    errno = 0;
    FilePtr f(std::fopen(tmp.string().c_str(), "wb"));
    if (!f) {
      const int err = errno;
      discard();
      throw Error("cannot write '" + file.path.string() + "': " + reason(err));
    }
    temporaries.push_back(tmp);
    errno = 0;
    const bool ok = std::fwrite(file.bytes.data(), 1, file.bytes.size(), f.get()) == file.bytes.size() &&
                    std::fflush(f.get()) == 0;
    const int err = errno;
    const bool closed = std::fclose(f.release()) == 0;
    if (!ok || !closed) {
      discard();
      throw Error("cannot write '" + file.path.string() + "': " + reason(err ? err : EIO));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temporaries[i], files[i].path, ec);
    if (ec) {
      discard();
      throw Error("cannot write '" + files[i].path.string() + "': " + ec.message());
    }
  }
}

}  // namespace kssim::io
