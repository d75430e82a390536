// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A rank-2 (H, W) View is one image and a rank-3 (D, H, W) View one volume: every one-call function gives the
// bits it gives for the same memory seen as a batch of one, (1, 1, H, W) or (1, 1, D, H, W), and writes maps
// and gradients of the single View's rank.
#include "TestingUtilities.hpp"

#include <type_traits>

namespace kssim_test {

template <class C, int Rank>
void expect_single_views_match_a_batch_of_one(const Shape& s, unsigned seed) {
  static_assert(Rank == 2 || Rank == 3);
  constexpr int B = Rank + 2;
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  using Single = Kokkos::View<std::conditional_t<Rank == 2, T**, T***>, typename C::layout,
                              typename C::memory_space, Kokkos::MemoryUnmanaged>;
  ASSERT_EQ(s.n * s.c, 1);
  const auto single = [&](const auto& batch) {
    if constexpr (Rank == 2)
      return Single(batch.data(), s.h, s.w);
    else
      return Single(batch.data(), s.d, s.h, s.w);
  };
  const auto in = noisy_views<C, B>(s, seed, 0.1);
  const auto mask_batch = to_view<C, B>("mask", s, random_image(s, seed + 2));
  const Single a = single(in.a), b = single(in.b), mask = single(mask_batch);
  Exec exec;
  kssim::Options same;
  same.padding = kssim::Padding::Same;  // maps shaped like the images

  EXPECT_EQ(kssim::ssim(exec, a, b), kssim::ssim(exec, in.a, in.b));
  auto e_single = kssim::map_extents(a);
  auto e_batch = kssim::map_extents(in.a);
  for (int i = 0; i < Rank; ++i) EXPECT_EQ(e_single[i], e_batch[i + 2]);

  auto map1 = make_view<C, B>("map1", s), map2 = make_view<C, B>("map2", s);
  kssim::ssim_map(exec, a, b, single(map1), same);
  kssim::ssim_map(exec, in.a, in.b, map2, same);
  EXPECT_EQ(from_view(map1, s), from_view(map2, s));

  auto g1 = make_view<C, B>("g1", s), g2 = make_view<C, B>("g2", s);
  EXPECT_EQ(kssim::ssim_grad(exec, a, b, single(g1)), kssim::ssim_grad(exec, in.a, in.b, g2));
  EXPECT_EQ(from_view(g1, s), from_view(g2, s));

  Kokkos::View<double*, typename C::memory_space> per1("per1", 1), per2("per2", 1);
  kssim::ssim_per_image(exec, a, b, per1);
  kssim::ssim_per_image(exec, in.a, in.b, per2);
  const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per1);
  const auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per2);
  EXPECT_EQ(h1(0), h2(0));

  kssim::MSSSIMOptions ms;
  ms.ssim.window_size = 3;
  ms.weights = {0.4, 0.6};
  EXPECT_EQ(kssim::ms_ssim(exec, a, b, ms), kssim::ms_ssim(exec, in.a, in.b, ms));
  EXPECT_EQ(kssim::ms_ssim_grad(exec, a, b, single(g1), {}, ms), kssim::ms_ssim_grad(exec, in.a, in.b, g2, {}, ms));
  EXPECT_EQ(from_view(g1, s), from_view(g2, s));

  for (kssim::MaskMode mode : {kssim::MaskMode::Weights, kssim::MaskMode::Normalized}) {
    EXPECT_EQ(kssim::masked_ssim(exec, a, b, mask, mode), kssim::masked_ssim(exec, in.a, in.b, mask_batch, mode));
    EXPECT_EQ(kssim::masked_ssim_grad(exec, a, b, mask, mode, single(g1)),
              kssim::masked_ssim_grad(exec, in.a, in.b, mask_batch, mode, g2));
    EXPECT_EQ(from_view(g1, s), from_view(g2, s));
  }
  // A mask of another single shape is refused with the image's extents.
  Kokkos::View<T**, typename C::layout, typename C::memory_space> wrong("wrong", 3, 4);
  if constexpr (Rank == 2)
    EXPECT_THROW(kssim::masked_ssim(exec, a, b, wrong, kssim::MaskMode::Weights), std::invalid_argument);

  EXPECT_EQ(kssim::l1_ssim_loss(exec, a, b), kssim::l1_ssim_loss(exec, in.a, in.b));
  EXPECT_EQ(kssim::l1_ssim_loss_grad(exec, a, b, single(g1)), kssim::l1_ssim_loss_grad(exec, in.a, in.b, g2));
  EXPECT_EQ(from_view(g1, s), from_view(g2, s));

  // Extents are checked at the single View's rank.
  if constexpr (Rank == 2) {
    Kokkos::View<T**, typename C::layout, typename C::memory_space> small_map("small", s.h - 1, s.w);
    EXPECT_THROW(kssim::ssim_map(exec, a, b, small_map, same), std::invalid_argument);
  }
}

}  // namespace kssim_test
