// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Workspace budgets that force a problem into pieces (include/kssim/impl/ssim/Slabs.hpp): groups of one image,
// of one channel, and slabs of a given number of map rows (Test_Slabs.cpp, Test_MaskedSSIM.cpp).
#include "TestingUtilities.hpp"

#include <kssim/impl/masked/NormalizedPlan.hpp>
#include <kssim/impl/ssim/Plan.hpp>

#include <string>
#include <utility>
#include <vector>

namespace kssim_test {

// The workspace a plan of this (sub-)problem takes with o's schedule (forced: schedules take different
// workspaces, so each gets its own budgets), optionally as an interior slab of `slab_rows` map rows along the
// slab axis (the whole window's halo inside the field, as Slabs.hpp sizes slabs); `normalized`: masked SSIM's
// normalized statistics' plan (NormalizedPlan), else SSIM's (masked map weights run on it too).
template <class C, int Rank>
std::size_t workspace_for(const Shape& s, kssim::Options o, kssim::impl::PartialPlanes wanted, int slab_rows = 0,
                          bool normalized = false) {
  using Exec = typename C::execution_space;
  using T = typename C::value_type;
  auto g = kssim::impl::make_geometry<Rank>(object_extents<Rank>(s), o);
  if (slab_rows > 0) {
    (Rank == 5 ? g.d : g.h) = slab_rows + o.window_size - 1;
    (Rank == 5 ? g.od : g.oh) = slab_rows;
    (Rank == 5 ? g.pad_d : g.pad_h) = 0;
  }
  if (normalized) return kssim::impl::NormalizedPlan<Exec, T>::workspace_bytes(Exec(), g, o, wanted);
  return kssim::impl::Plan<Exec, T>::workspace_bytes(Exec(), g, o, wanted);
}

// Budgets that split `s` into groups of one image, groups of one channel, and slabs of `rows` map rows.
template <class C, int Rank>
std::vector<std::pair<std::string, std::size_t>> budgets(const Shape& s, const kssim::Options& o, int rows,
                                                         kssim::impl::PartialPlanes wanted, bool normalized = false) {
  Shape image = s, slice = s;
  image.n = 1;
  slice.n = slice.c = 1;
  std::vector<std::pair<std::string, std::size_t>> b;
  if (s.n > 1) b.push_back({"images", workspace_for<C, Rank>(image, o, wanted, 0, normalized)});
  if (s.c > 1) b.push_back({"channels", workspace_for<C, Rank>(slice, o, wanted, 0, normalized)});
  b.push_back({"slabs", workspace_for<C, Rank>(slice, o, wanted, rows, normalized)});
  return b;
}

}  // namespace kssim_test
