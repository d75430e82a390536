// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The strided-axis passes of one problem shape, shared by every schedule built on the four-stage pipeline
// (Plan.hpp, MaskedPlan.hpp): the column pass (H), for volumes the depth pass (D), and their adjoints, with
// tiles sized for `planes` staged planes (AxisTile.hpp).

#include <kssim/impl/stages/AxisTile.hpp>
#include <kssim/impl/core/Geometry.hpp>

namespace kssim::impl {

struct AxisPasses {
  AxisPass column, adjoint_column, depth, adjoint_depth;
};

// `g` carries the row pitch of the row-pass planes (row_pitched in Plan.hpp).
template <class ExecSpace, class T>
AxisPasses make_axis_passes(const ExecSpace& exec, const Geometry& g, int planes) {
  const int tl = axis_tile_len<ExecSpace, T>(exec, planes, g.window);
  constexpr int ti = Tiles<ExecSpace, T>::axis_inner;
  AxisPasses p;
  p.column = AxisPass{g.images() * g.d, g.h, g.oh, g.ow, g.pad_h, g.d};
  // Images: the map pass writes the partial derivatives with rows as padded as the row planes', so that
  // the adjoint column pass stages them with 128-bit loads too. Volumes: the H pass's planes are read
  // by the depth pass, whose contiguous axis is a whole (Ho, Wo) plane.
  p.column.set_steps(g.row_pitch, g.volumetric ? g.ow : g.row_pitch);
  p.column.set_tiles(tl, ti);
  p.column.padding = g.padding;
  p.adjoint_column = p.column.adjoint(g.window);
  p.adjoint_column.set_tiles(tl, ti);
  if (g.volumetric) {
    p.depth = AxisPass{g.images(), g.d, g.od, g.oh * g.ow, g.pad_d, 1};
    p.depth.set_tiles(tl, ti);
    p.depth.padding = g.padding;
    p.adjoint_depth = p.depth.adjoint(g.window);
    p.adjoint_depth.set_tiles(tl, ti);
  }
  return p;
}

}  // namespace kssim::impl
