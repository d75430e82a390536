// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit tests of the channel-axis handling of `kssim compare` (src/cli/ChannelAxis.*).

#include "cli/ChannelAxis.hpp"
#include "cli/UsageError.hpp"

#include <gtest/gtest.h>

namespace kssim::cli {
namespace {

using Shape = std::vector<std::size_t>;

TEST(ChannelAxis, AmbiguousShapesAreRefusedUnlessTheOptionIsGiven) {
  EXPECT_THROW(channel_axis_of("A", Shape{512, 512, 3}, 2, ""), UsageError);
  EXPECT_THROW(channel_axis_of("A", Shape{2, 64, 64, 4}, 2, ""), UsageError);
  EXPECT_THROW(channel_axis_of("A", Shape{9, 16, 16, 1}, 3, ""), UsageError);
  try {
    channel_axis_of("A 'x.npy'", Shape{512, 512, 3}, 2, "");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--channel-axis"), std::string::npos);
  }
  EXPECT_EQ(channel_axis_of("A", Shape{512, 512, 3}, 2, "last"), ChannelAxis::Last);
  EXPECT_EQ(channel_axis_of("A", Shape{512, 512, 3}, 2, "first"), ChannelAxis::First);
  EXPECT_EQ(channel_axis_of("A", Shape{3, 512, 512}, 2, ""), ChannelAxis::First);    // C <= 4: kssim's layout
  EXPECT_EQ(channel_axis_of("A", Shape{512, 512, 7}, 2, ""), ChannelAxis::First);    // last not 1, 3 or 4
  EXPECT_EQ(channel_axis_of("A", Shape{512, 512}, 2, "last"), ChannelAxis::First);   // no channel axis
  EXPECT_EQ(channel_axis_of("A", Shape{8, 9, 10}, 3, "last"), ChannelAxis::First);   // (D, H, W)
}

TEST(ChannelAxis, MovesTheAxisBothWays) {
  // (N=2, H=2, W=3, C=2) with value = n*1000 + y*100 + x*10 + c.
  std::vector<double> v;
  for (int n = 0; n < 2; ++n)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x)
        for (int c = 0; c < 2; ++c) v.push_back(n * 1000 + y * 100 + x * 10 + c);
  const io::Array last(Shape{2, 2, 3, 2}, v);
  EXPECT_EQ(channels_first_shape(last.shape, 2, ChannelAxis::Last), (Shape{2, 2, 2, 3}));
  const io::Array first = channels_first(last, 2, ChannelAxis::Last);
  ASSERT_EQ(first.shape, (Shape{2, 2, 2, 3}));
  const auto& f = std::get<std::vector<double>>(first.values);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) EXPECT_EQ(f[((n * 2 + c) * 2 + y) * 3 + x], n * 1000 + y * 100 + x * 10 + c);
  const io::Array back = channels_last(first, 2, ChannelAxis::Last);
  EXPECT_EQ(back.shape, last.shape);
  EXPECT_EQ(std::get<std::vector<double>>(back.values), v);
  EXPECT_EQ(std::get<std::vector<double>>(channels_first(last, 2, ChannelAxis::First).values), v);  // no-op
}

}  // namespace
}  // namespace kssim::cli
