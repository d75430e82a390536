// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Robustness of the readers: thousands of randomly mutated, truncated and extended valid files must each
// either parse or throw kssim::io::Error, never crash or throw anything else (run under ASan/UBSan in the
// asan preset). A cheap stand-in for fuzzing, with a fixed seed.

#include "TestBytes.hpp"
#include "io/Error.hpp"
#include "io/Load.hpp"
#include "io/Npy.hpp"
#include "io/PngImage.hpp"
#include "io/PnmImage.hpp"

#include <gtest/gtest.h>

#include <random>

namespace kssim::io {
namespace {

Image sample_image(int channels, int max_value) {
  Image im;
  im.width = 7;
  im.height = 5;
  im.channels = channels;
  im.max_value = max_value;
  im.samples.resize(im.sample_count());
  for (std::size_t i = 0; i < im.samples.size(); ++i) im.samples[i] = std::uint16_t((i * 977u) % (max_value + 1u));
  return im;
}

std::vector<std::vector<std::byte>> seeds() {
  std::vector<std::vector<std::byte>> s;
  s.push_back(encode_npy(Array({2, 3, 4}, std::vector<float>(24, 0.5f))));
  s.push_back(encode_npy(Array({3, 5}, std::vector<double>(15, -1.0))));
  s.push_back(encode_png(sample_image(3, 255)));
  s.push_back(encode_png(sample_image(2, 65535)));
  s.push_back(encode_pnm(sample_image(1, 255)));
  s.push_back(encode_pnm(sample_image(3, 1000)));
  s.push_back(encode_pnm(sample_image(1, 40), true));
  return s;
}

TEST(Mutations, ReadersOnlyThrowIoError) {
  std::mt19937 rng(12345);
  int parsed = 0, rejected = 0;
  for (const auto& seed : seeds()) {
    for (int round = 0; round < 600; ++round) {
      std::vector<std::byte> b = seed;
      const int edits = 1 + int(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        switch (rng() % 5) {
          case 0: b[rng() % b.size()] = std::byte(rng() & 0xff); break;                       // random byte
          case 1: b[rng() % b.size()] ^= std::byte(1u << (rng() % 8)); break;                 // bit flip
          case 2: b.resize(rng() % (b.size() + 1)); break;                                    // truncate
          case 3: b.insert(b.begin() + std::ptrdiff_t(rng() % (b.size() + 1)), std::byte(rng() & 0xff)); break;
          case 4: b[rng() % b.size()] = std::byte("0123456789 \n#"[rng() % 13]); break;       // header-ish text
        }
        if (b.empty()) b.push_back(std::byte('P'));
      }
      try {
        (void)load_array(b);
        ++parsed;
      } catch (const Error&) {
        ++rejected;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected exception type: " << e.what();
      }
    }
  }
  EXPECT_GT(rejected, 0);
  RecordProperty("parsed", parsed);
}

}  // namespace
}  // namespace kssim::io
