// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kssim::mpi on 1, 2 or 4 ranks (CTest runs this program under mpirun -np 1, 2 and 4): every
// decomposition of the communicator's size that the cases list, 2D and 3D, valid and same padding, uneven
// splits and blocks thinner than the halo, against (a) the independent float64 reference of the whole
// field (ReferenceSSIM.hpp) and (b) the single-process library on the whole field; bitwise repeatability
// and agreement between ranks; and bad input, which must throw on every rank (a hang fails by timeout).

#include "TestingUtilities.hpp"

#include <gtest/gtest.h>
#include <kssim/kssim.hpp>
#include <kssim/mpi/Distributed.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using kssim_test::ReferenceOptions;
using kssim_test::Shape;
using Exec = Kokkos::DefaultExecutionSpace;

int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// One axis split into parts: their lengths (summing to the global extent).
using Split = std::vector<int>;

// A decomposition: per spatial axis ([D,] H, W) the lengths of the blocks; the Cartesian grid is their counts.
struct Case {
  std::string name;
  Shape global;
  ReferenceOptions options;
  std::vector<Split> splits;
};

// Offsets of the parts of a split.
std::vector<int> starts(const Split& s) {
  std::vector<int> o(s.size(), 0);
  for (std::size_t k = 1; k < s.size(); ++k) o[k] = o[k - 1] + s[k - 1];
  return o;
}

// A Cartesian communicator over the world with the case's grid.
MPI_Comm cartesian(const std::vector<Split>& splits) {
  std::vector<int> dims, periods(splits.size(), 0);
  for (const auto& s : splits) dims.push_back(int(s.size()));
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, int(dims.size()), dims.data(), periods.data(), 0, &cart);
  return cart;
}

// This rank's block of a (N, C, D, H, W) host array.
std::vector<double> block_of(const std::vector<double>& v, const Shape& g, const Shape& b, const int* lo) {
  std::vector<double> out(b.size());
  for (int n = 0; n < b.n; ++n)
    for (int c = 0; c < b.c; ++c)
      for (int d = 0; d < b.d; ++d)
        for (int h = 0; h < b.h; ++h)
          for (int w = 0; w < b.w; ++w) out[b.index(n, c, d, h, w)] = v[g.index(n, c, lo[0] + d, lo[1] + h, lo[2] + w)];
  return out;
}

// Sums of squares over every rank: the relative L2 error of a field split over the ranks.
double global_relative_l2(const std::vector<double>& got, const std::vector<double>& want) {
  double local[2] = {0, 0}, total[2];
  for (std::size_t i = 0; i < got.size(); ++i) {
    local[0] += (got[i] - want[i]) * (got[i] - want[i]);
    local[1] += want[i] * want[i];
  }
  MPI_Allreduce(local, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(total[0] / (total[1] > 0 ? total[1] : 1));
}
double global_max(double x) {
  double m;
  MPI_Allreduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

template <class T, int Rank, class Layout>
using View = std::conditional_t<Rank == 4, Kokkos::View<T****, Layout>, Kokkos::View<T*****, Layout>>;

// The spatial axes (D, H, W) of a rank-Rank block: Rank 4 has no D.
template <int Rank>
constexpr int first_axis = 5 - Rank;

// Values, map and gradients of one case on this rank against the whole field's.
template <class T, int Rank, class Layout>
void check_case(const Case& k) {
  using C = kssim_test::Config<Exec, T, Layout>;
  const Shape& g = k.global;
  SCOPED_TRACE(k.name + ", " + kssim_test::describe(g, k.options) + (std::is_same_v<T, float> ? ", float" : ", double"));
  MPI_Comm cart = cartesian(k.splits);
  int me = 0, coords[3] = {0, 0, 0};
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, Rank - 2, coords);
  Shape b = g;
  int lo[3] = {0, 0, 0};
  kssim::mpi::Offset<View<T, Rank, Layout>> offset{};
  for (int s = 0; s < Rank - 2; ++s) {
    const int a = first_axis<Rank> + s, part = coords[s];
    const int length = k.splits[s][part];
    (a == 0 ? b.d : a == 1 ? b.h : b.w) = length;
    lo[a] = starts(k.splits[s])[part];
    offset[s] = lo[a];
  }
  const auto x = kssim_test::rounded<T>(kssim_test::random_image(g, 11));
  const auto y = kssim_test::rounded<T>(kssim_test::noisy_copy(x, 12, 0.1));
  const auto ref = kssim_test::reference_ssim(g, x, y, k.options, true);
  const kssim::Options opts = kssim_test::to_options(k.options);
  Exec exec;

  // The single-process library on the whole field.
  const Shape ms = ref.map_shape;
  const auto whole_x = kssim_test::to_view<C, Rank>("x", g, x), whole_y = kssim_test::to_view<C, Rank>("y", g, y);
  auto whole_map = kssim_test::make_view<C, Rank>("map", ms);
  auto whole_g1 = kssim_test::make_view<C, Rank>("g1", g), whole_g2 = kssim_test::make_view<C, Rank>("g2", g);
  kssim::ssim_map(exec, whole_x, whole_y, whole_map, opts);
  const double single = kssim::ssim_grad(exec, whole_x, whole_y, whole_g1, whole_g2, opts);

  // This rank's blocks.
  const auto xb = kssim_test::to_view<C, Rank>("xb", b, block_of(x, g, b, lo));
  const auto yb = kssim_test::to_view<C, Rank>("yb", b, block_of(y, g, b, lo));
  const auto mb = kssim::mpi::map_block(cart, offset, xb, opts);
  Shape mbs = ms;
  int mlo[3] = {0, 0, 0};
  for (int s = 0; s < Rank - 2; ++s) {
    const int a = first_axis<Rank> + s;
    (a == 0 ? mbs.d : a == 1 ? mbs.h : mbs.w) = mb.extent[2 + s];
    mlo[a] = mb.offset[s];
  }
  auto map = kssim_test::make_view<C, Rank>("mapb", mbs);
  auto g1 = kssim_test::make_view<C, Rank>("g1b", b), g2 = kssim_test::make_view<C, Rank>("g2b", b);
  const double value = kssim::mpi::ssim_map_grad(exec, cart, offset, xb, yb, map, g1, g2, opts);

  // Errors against the float64 reference, and against the single-process library.
  const auto got_map = kssim_test::from_view(map, mbs);
  const auto got1 = kssim_test::from_view(g1, b), got2 = kssim_test::from_view(g2, b);
  const double e_value = std::abs(value - ref.mean), e_single = std::abs(value - single);
  const double e_map = global_max(kssim_test::max_abs_error(got_map, block_of(ref.map, ms, mbs, mlo)));
  const double e_map_single =
      global_max(kssim_test::max_abs_error(got_map, block_of(kssim_test::from_view(whole_map, ms), ms, mbs, mlo)));
  const double e_grad = std::max(global_relative_l2(got1, block_of(ref.grad1, g, b, lo)),
                                 global_relative_l2(got2, block_of(ref.grad2, g, b, lo)));
  const double e_grad_single =
      std::max(global_relative_l2(got1, block_of(kssim_test::from_view(whole_g1, g), g, b, lo)),
               global_relative_l2(got2, block_of(kssim_test::from_view(whole_g2, g), g, b, lo)));
  EXPECT_LE(e_value, kssim_test::value_tolerance<T>());
  EXPECT_LE(e_single, kssim_test::value_tolerance<T>());
  EXPECT_LE(e_map, kssim_test::map_tolerance<T>());
  EXPECT_LE(e_map_single, kssim_test::map_tolerance<T>());
  EXPECT_LE(e_grad, kssim_test::gradient_tolerance<T>());
  EXPECT_LE(e_grad_single, kssim_test::gradient_tolerance<T>());
  if (world_rank() == 0)
    std::printf("  %-28s %s %-6s errors vs float64 / vs one process: value %.1e / %.1e, map %.1e / %.1e, "
                "gradients %.1e / %.1e\n",
                k.name.c_str(), std::is_same_v<T, float> ? "float " : "double", k.options.same ? "same" : "valid",
                e_value, e_single, e_map, e_map_single, e_grad, e_grad_single);

  std::vector<double> values(world_size());
  MPI_Allgather(&value, 1, MPI_DOUBLE, values.data(), 1, MPI_DOUBLE, cart);
  for (double v : values) EXPECT_EQ(std::memcmp(&v, &value, sizeof v), 0) << "the ranks' means differ: " << v << " " << value;
  long long map_pixels = (long long)mbs.size(), all_pixels = 0;
  MPI_Allreduce(&map_pixels, &all_pixels, 1, MPI_LONG_LONG, MPI_SUM, cart);
  EXPECT_EQ(all_pixels, (long long)ms.size()) << "the map blocks do not tile the map";

  // The same decomposition again: bitwise the same mean and gradient (one gradient this time).
  auto again = kssim_test::make_view<C, Rank>("again", b);
  const double value_again = kssim::mpi::ssim_grad(exec, cart, offset, xb, yb, again, {}, opts);
  EXPECT_EQ(std::memcmp(&value_again, &value, sizeof value), 0) << value_again << " " << value;
  const auto got_again = kssim_test::from_view(again, b);
  EXPECT_TRUE(got_again == got1) << "a second run changed the gradient";
  EXPECT_NEAR(kssim::mpi::ssim(exec, cart, offset, xb, yb, opts), value, kssim_test::value_tolerance<T>());
  MPI_Comm_free(&cart);
}

Shape image(int n, int c, int h, int w) { return Shape{n, c, 1, h, w, false}; }
Shape volume(int n, int c, int d, int h, int w) { return Shape{n, c, d, h, w, true}; }

// Decompositions for the world's size: even and uneven splits, blocks thinner than the halo, corners.
std::vector<Case> cases_2d() {
  const Shape g = image(1, 2, 23, 29);
  ReferenceOptions w7, w11;
  w7.window = 7;
  w11.window = 11;
  switch (world_size()) {
    case 1: return {{"1x1", g, w7, {{23}, {29}}}, {"1x1 w11", g, w11, {{23}, {29}}}};
    case 2:
      return {{"1x2", g, w7, {{23}, {14, 15}}},
              {"2x1 thin (3 < halo 5)", g, w11, {{3, 20}, {29}}},
              {"1x2 thin last (2 < halo 5)", g, w11, {{23}, {27, 2}}}};
    case 4:
      return {{"2x2 uneven", g, w7, {{11, 12}, {9, 20}}},
              {"1x4 thin (2, 3 < halo 5)", g, w11, {{23}, {2, 3, 20, 4}}},
              {"2x2 corner blocks of 1x4", g, w11, {{1, 22}, {4, 25}}},
              {"4x1", g, w7, {{5, 6, 6, 6}, {29}}}};
    default: return {};
  }
}

std::vector<Case> cases_3d() {
  const Shape g = volume(1, 1, 13, 15, 17);
  ReferenceOptions w5, w7;
  w5.window = 5;
  w7.window = 7;
  switch (world_size()) {
    case 1: return {{"1x1x1", g, w7, {{13}, {15}, {17}}}};
    case 2: return {{"1x1x2", g, w7, {{13}, {15}, {8, 9}}}, {"2x1x1 thin (2 < halo 3)", g, w7, {{2, 11}, {15}, {17}}}};
    case 4:
      return {{"2x2x1 uneven", g, w5, {{6, 7}, {4, 11}, {17}}},
              {"1x2x2 thin (1, 2 < halo 3)", g, w7, {{13}, {1, 14}, {15, 2}}},
              {"4x1x1", g, w7, {{3, 3, 3, 4}, {15}, {17}}}};
    default: return {};
  }
}

template <class T, int Rank, class Layout>
void check_cases(const std::vector<Case>& cases) {
  for (Case k : cases)
    for (bool same : {false, true}) {
      k.options.same = same;
      check_case<T, Rank, Layout>(k);
    }
}

TEST(MpiSsim, ImagesMatchTheWholeFieldFloat) { check_cases<float, 4, Kokkos::LayoutRight>(cases_2d()); }
TEST(MpiSsim, ImagesMatchTheWholeFieldDoubleLayoutLeft) { check_cases<double, 4, Kokkos::LayoutLeft>(cases_2d()); }
TEST(MpiSsim, VolumesMatchTheWholeFieldFloat) { check_cases<float, 5, Kokkos::LayoutRight>(cases_3d()); }
TEST(MpiSsim, VolumesMatchTheWholeFieldDouble) { check_cases<double, 5, Kokkos::LayoutRight>(cases_3d()); }

// f() must throw std::invalid_argument on every rank, with the same message.
template <class F>
void expect_throw_everywhere(const char* what, F&& f) {
  std::string message;
  try {
    f();
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("kssim"), std::string::npos) << what << ": rank " << world_rank() << " did not throw";
  int length = int(message.size()), longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::vector<char> mine(longest + 1, 0), all(std::size_t(longest + 1) * world_size());
  std::memcpy(mine.data(), message.data(), message.size());
  MPI_Allgather(mine.data(), longest + 1, MPI_CHAR, all.data(), longest + 1, MPI_CHAR, MPI_COMM_WORLD);
  for (int q = 0; q < world_size(); ++q)
    EXPECT_EQ(std::string(&all[std::size_t(q) * (longest + 1)]), message) << what << ": ranks disagree";
  if (world_rank() == 0) std::printf("  %s -> %s\n", what, message.c_str());
}

TEST(MpiSsim, BadInputThrowsOnEveryRank) {
  using V4 = Kokkos::View<float****>;
  using V5 = Kokkos::View<float*****>;
  Exec exec;
  const int p = world_size(), me = world_rank(), last = p - 1;
  int dims[2] = {1, p}, periods[2] = {0, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  const int width = 16;  // per rank, along W
  V4 a("a", 1, 1, 16, width), b("b", 1, 1, 16, width);
  const std::array<int, 2> offset{0, me * width};
  kssim::Options o;
  o.window_size = 7;
  ASSERT_NO_THROW(kssim::mpi::ssim(exec, cart, offset, a, b, o));

  expect_throw_everywhere("no Cartesian topology", [&] { kssim::mpi::ssim(exec, MPI_COMM_WORLD, offset, a, b, o); });
  expect_throw_everywhere("volumes on a 2D grid", [&] {
    V5 v("v", 1, 1, 8, 16, width);
    kssim::mpi::ssim(exec, cart, {0, 0, me * width}, v, v, o);
  });
  expect_throw_everywhere("a gap between blocks", [&] {
    kssim::mpi::ssim(exec, cart, {0, me * width + (me == last ? 1 : 0)}, a, b, o);
  });
  expect_throw_everywhere("img2 unlike img1 on one rank", [&] {
    V4 other("other", 1, 1, 16, me == last ? width + 1 : width);
    kssim::mpi::ssim(exec, cart, offset, a, other, o);
  });
  expect_throw_everywhere("grad1 of the wrong extents on rank 0", [&] {
    V4 grad("grad", 1, 1, 16, me == 0 ? width - 1 : width);
    kssim::mpi::ssim_grad(exec, cart, offset, a, b, grad, {}, o);
  });
  expect_throw_everywhere("a map block of the wrong extents on the last rank", [&] {
    auto mb = kssim::mpi::map_block(cart, offset, a, o);
    V4 map("map", 1, 1, mb.extent[2] + (me == last ? 1 : 0), mb.extent[3]);
    kssim::mpi::ssim_map(exec, cart, offset, a, b, map, o);
  });
  expect_throw_everywhere("a field smaller than the window (valid padding)", [&] {
    V4 small("small", 1, 1, 6, width);
    kssim::mpi::ssim(exec, cart, offset, small, small, o);
  });
  expect_throw_everywhere("an invalid option on rank 0", [&] {
    kssim::Options bad = o;
    if (me == 0) bad.sigma = -1;
    kssim::mpi::ssim(exec, cart, offset, a, b, bad);
  });
  if (p > 1) {
    expect_throw_everywhere("a block taller than its row's", [&] {
      V4 tall("tall", 1, 1, me == last ? 17 : 16, width);
      kssim::mpi::ssim(exec, cart, offset, tall, tall, o);
    });
    expect_throw_everywhere("another window on the last rank", [&] {
      kssim::Options other = o;
      if (me == last) other.window_size = 9;
      kssim::mpi::ssim(exec, cart, offset, a, b, other);
    });
    expect_throw_everywhere("double on rank 0, float elsewhere", [&] {
      if (me == 0) {
        Kokkos::View<double****> d("d", 1, 1, 16, width);
        kssim::mpi::ssim(exec, cart, offset, d, d, o);
      } else {
        kssim::mpi::ssim(exec, cart, offset, a, b, o);
      }
    });
    expect_throw_everywhere("another N on the last rank", [&] {
      V4 more("more", me == last ? 2 : 1, 1, 16, width);
      kssim::mpi::ssim(exec, cart, offset, more, more, o);
    });
  }
  // Still in step after all of that, and after the kept buffers are released.
  kssim::free_workspaces();
  EXPECT_NO_THROW(kssim::mpi::ssim(exec, cart, offset, a, b, o));
  MPI_Comm_free(&cart);
}

}  // namespace

// MPI around Kokkos around GoogleTest. Ranks other than 0 print failures only; the exit status is the
// worst rank's, so a failure on any rank fails the test.
int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    if (world_rank() != 0) GTEST_FLAG_SET(brief, true);
    rc = RUN_ALL_TESTS();
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
