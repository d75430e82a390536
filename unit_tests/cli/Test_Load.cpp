// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of format detection (src/io/Load.*) and all-or-nothing output (src/io/File.*).

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/File.hpp"
#include "io/Load.hpp"
#include "io/Npy.hpp"
#include "io/PngImage.hpp"
#include "io/PnmImage.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kssim::io {
namespace {

namespace fs = std::filesystem;
using test::bytes_of;

Image gray(int w, int h) {
  Image im;
  im.width = w;
  im.height = h;
  im.channels = 1;
  im.samples.assign(im.sample_count(), 51);
  return im;
}

TEST(Load, RecognisesFormatsByContent) {
  const LoadedArray npy = load_array(encode_npy(Array({2, 2}, std::vector<double>{1, 2, 3, 4})));
  EXPECT_EQ(npy.format, Format::Npy);
  EXPECT_EQ(npy.array.dtype(), DType::Float64);
  const LoadedArray png = load_array(encode_png(gray(3, 2)));
  EXPECT_EQ(png.format, Format::Png);
  EXPECT_EQ(png.array.shape, (std::vector<std::size_t>{1, 1, 2, 3}));
  EXPECT_EQ(std::get<std::vector<float>>(png.array.values)[0], 0.2f);
  const LoadedArray pnm = load_array(encode_pnm(gray(3, 2)));
  EXPECT_EQ(pnm.format, Format::Pnm);
  EXPECT_EQ(pnm.array.values, png.array.values);
}

TEST(Load, RejectsUnknownAndEmptyInput) {
  EXPECT_THROW(load_array({}), Error);
  EXPECT_THROW(load_array(bytes_of("GIF89a....")), Error);
  EXPECT_THROW(load_array(bytes_of("P")), Error);
  EXPECT_THROW(load_array(bytes_of("\x93NUMP")), Error);
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kssim_io_files_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<fs::path> listing() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    return out;
  }
  fs::path dir_;
};

TEST_F(Files, WritesAllFiles) {
  write_files({{dir_ / "a.bin", bytes_of("alpha")}, {dir_ / "b.bin", bytes_of("beta")}});
  EXPECT_EQ(read_file(dir_ / "a.bin"), bytes_of("alpha"));
  EXPECT_EQ(read_file(dir_ / "b.bin"), bytes_of("beta"));
  EXPECT_EQ(listing().size(), 2u);
}

TEST_F(Files, WritesNothingWhenOneFileFails) {
  { std::ofstream(dir_ / "b.bin") << "old"; }
  EXPECT_THROW(write_files({{dir_ / "a.bin", bytes_of("alpha")},
                            {dir_ / "b.bin", bytes_of("beta")},
                            {dir_ / "missing" / "c.bin", bytes_of("gamma")}}),
               Error);
  EXPECT_EQ(listing(), std::vector<fs::path>{"b.bin"});  // no a.bin, no temporaries
  EXPECT_EQ(read_file(dir_ / "b.bin"), bytes_of("old"));
}

TEST_F(Files, ReadFileErrors) {
  EXPECT_THROW(read_file(dir_ / "nope"), Error);
  EXPECT_THROW(read_file(dir_), Error);
}

}  // namespace
}  // namespace kssim::io
