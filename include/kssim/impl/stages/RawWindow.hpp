// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// SSIM and MS-SSIM with Window::Float32 (Options.hpp): the window w that fused-ssim and the PyTorch
// references use does not sum to 1 but to S = 1 - deficit, and their SSIM (and pytorch-msssim's cs at every
// scale) is of its raw moments, B_w(x^2) - B_w(x)^2. The blurs keep the normalised window w^ = w / S (their
// local centring, LocalMoments.hpp, relies on weights that sum to 1) and recentred data x' = x - s1; the map
// pass then turns those moments into the raw window's. With mu = m + s the normalised mean and v, cov the
// normalised (co)variances:
//   mean_w = S mu,   var_w = S v + S (1 - S) mu^2,   cov_w = S cov + S (1 - S) mu1 mu2.
// On uncorrelated images cov_w - S cov ~ (1 - S) / 4 ~ 1.5e-8, which moves SSIM ~ C2 / (2 sigma^2) by ~2e-7:
// the reason kssim's exact window does not pass the peers' tests, and this one does.
//
// For the backward pass, the map's partial derivatives (MapFormula.hpp; any term of MapTerms.hpp: with
// respect to the raw sums of the data it was given, e11' = B_w(x^2), e12' = B_w(x y), m1' = B_w(x), shift 0)
// are taken back to the blur's (e11 = B^(x'^2), e12 = B^(x'y'), m1 = B^(x')): e11' = S (e11 + 2 s1 m1 +
// s1^2), e12' = S (e12 + s2 m1 + s1 m2 + s1 s2), m1' = S (m1 + s1), so
//   d/de11 = S d/de11',   d/de12 = S d/de12',   d/dm1 = S (d/dm1' + 2 s1 d/de11' + s2 d/de12').

#include <kssim/impl/stages/MapFormula.hpp>

#include <Kokkos_Core.hpp>

namespace kssim::impl {

template <class T>
struct RawWindow {
  T scale, deficit;  // S and 1 - S (GaussianWindow::raw_scale, raw_deficit)

  // The blur's moments (m1, m2 recentred by s1, s2; vs = v1 + v2; cov) as the raw window's, with shift 0.
  // Written as each moment plus deficit times a correction, so that only the small correction is rounded
  // (S v itself would round v by up to an ulp, on the order of the effect).
  KOKKOS_FORCEINLINE_FUNCTION void to_raw(T& m1, T& m2, T& vs, T& cov, T s1, T s2) const {
    const T mu1 = m1 + s1, mu2 = m2 + s2;
    m1 = mu1 - deficit * mu1;
    m2 = mu2 - deficit * mu2;
    vs = vs + deficit * (scale * (mu1 * mu1 + mu2 * mu2) - vs);
    cov = cov + deficit * (scale * (mu1 * mu2) - cov);
  }

  // The partials of a map evaluated on to_raw's moments, as partials with respect to the blur's raw sums.
  KOKKOS_FORCEINLINE_FUNCTION MapAndPartials<T> from_raw(const MapAndPartials<T>& r, T s1, T s2) const {
    MapAndPartials<T> b;
    b.map = r.map;
    b.d_var = scale * r.d_var;
    b.d_cov = scale * r.d_cov;
    b.d_m1 = scale * (r.d_m1 + 2 * s1 * r.d_var + s2 * r.d_cov);
    b.d_m2 = scale * (r.d_m2 + 2 * s2 * r.d_var + s1 * r.d_cov);
    return b;
  }
};

}  // namespace kssim::impl
