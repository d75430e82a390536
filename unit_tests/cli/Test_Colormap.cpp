// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of the map picture's colours and tiling (src/cli/Colormap.*), against the documented colormap
// evaluated here in long double.

#include "cli/Colormap.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace kssim::cli {
namespace {

// The documented stops (README "Reading a --map PNG"), linear in between, rounded half up.
struct Expected {
  int rgb[3];
  bool near_tie;  // some channel within 1e-9 of a half: fused and unfused rounding may differ by one there
};
Expected documented(double s) {
  static const long double at[5] = {0, 0.25L, 0.5L, 0.75L, 1};
  static const int col[5][3] = {{0, 0, 0}, {70, 20, 130}, {200, 40, 80}, {245, 150, 30}, {255, 255, 215}};
  Expected e{{128, 128, 128}, false};
  if (std::isnan(s)) return e;
  const long double c = s <= 0 ? 0.0L : s >= 1 ? 1.0L : (long double)s;
  int i = 1;
  while (i < 4 && c > at[i]) ++i;
  const long double t = (c - at[i - 1]) / (at[i] - at[i - 1]);
  for (int k = 0; k < 3; ++k) {
    const long double v = col[i - 1][k] + t * (col[i][k] - col[i - 1][k]);
    e.rgb[k] = int(std::floor(v + 0.5L));
    e.near_tie = e.near_tie || std::abs(v - std::floor(v) - 0.5L) < 1e-9L;
  }
  return e;
}

TEST(Colormap, ColorsAreTheDocumentedOnes) {
  std::mt19937_64 gen(2024);
  std::uniform_real_distribution<double> u(-0.2, 1.2);
  std::vector<double> values = {0.0, -0.0, 0.25, 0.5, 0.75, 1.0, 1e-300, -1e-300, 0.25 + 1e-16, 1.0 - 1e-16,
                                std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(), 1.5, -3.0};
  for (int i = 0; i <= 4000; ++i) values.push_back(i / 4000.0);  // many exact halves: ties
  const std::size_t first_random = values.size();
  for (int i = 0; i < 200000; ++i) values.push_back(u(gen));
  int random_ties = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double s = values[i];
    const Rgb c = ssim_color(s);
    const Expected e = documented(s);
    const int got[3] = {c.r, c.g, c.b};
    for (int k = 0; k < 3; ++k) {
      if (e.near_tie) EXPECT_LE(std::abs(got[k] - e.rgb[k]), 1) << "s = " << s;
      else EXPECT_EQ(got[k], e.rgb[k]) << "s = " << s << ", channel " << k;
    }
    random_ties += i >= first_random && e.near_tie;
  }
  EXPECT_LE(random_ties, 2);  // so the random values are checked exactly
}

// Rows of a (2, 3, 4, 5) map: 2 rows of 3 tiles of 4 x 5, gutters of 2 gray pixels, widened to 25 pixels;
// float and double values, NaN gray, rows longer than the colouring's blocks of 256.
template <class T>
void check_rows(std::size_t n, std::size_t c, std::size_t h, std::size_t w, std::size_t width) {
  std::vector<T> v(n * c * h * w);
  std::mt19937 gen(7);
  std::uniform_real_distribution<T> u(T(-0.1), T(1.1));
  for (auto& x : v) x = u(gen);
  v[3] = std::numeric_limits<T>::quiet_NaN();
  const io::Array map({n, c, h, w}, v);
  const auto size = rendered_size(map.shape);
  ASSERT_EQ(size[0], c * w + (c - 1) * 2);
  ASSERT_EQ(size[1], n * h + (n - 1) * 2);
  std::vector<unsigned char> row(3 * width);
  for (std::size_t y = 0; y < size[1]; ++y) {
    render_map_row(map, y, width, row.data());
    const std::size_t ty = y / (h + 2), yy = y % (h + 2);
    for (std::size_t x = 0; x < width; ++x) {
      const std::size_t tx = x / (w + 2), xx = x % (w + 2);
      Rgb want = gutter_color;
      if (yy < h && tx < c && xx < w) want = ssim_color(double(v[((ty * c + tx) * h + yy) * w + xx]));
      ASSERT_EQ(row[3 * x], want.r) << "pixel (" << x << ", " << y << ")";
      ASSERT_EQ(row[3 * x + 1], want.g) << "pixel (" << x << ", " << y << ")";
      ASSERT_EQ(row[3 * x + 2], want.b) << "pixel (" << x << ", " << y << ")";
    }
  }
}

TEST(Colormap, RowsTileTheSlicesBetweenGrayGutters) {
  check_rows<float>(2, 3, 4, 5, 25);
  check_rows<double>(2, 3, 4, 5, 19);
  check_rows<float>(1, 2, 3, 600, 1300);  // blocks of 256 and a remainder
}

TEST(Colormap, VolumesHaveOneRowPerImageAndChannel) {
  const io::Array map({2, 3, 4, 5, 6}, std::vector<float>(2 * 3 * 4 * 5 * 6, 1.0f));
  EXPECT_EQ(tile_grid(map.shape), (std::vector<std::size_t>{6, 4}));
  EXPECT_EQ(rendered_size(map.shape), (std::vector<std::size_t>{4 * 6 + 3 * 2, 6 * 5 + 5 * 2}));
}

}  // namespace
}  // namespace kssim::cli
