#pragma once
// Stage 4: the recursive Gaussian (sigma 1.5) along one axis of a stack of planes. The recursion is
// stateful along the axis, so each team owns a strip of lines across it and walks the axis once; the lines
// of the strip run in parallel (vector lanes on GPUs, a loop the compiler vectorises on hosts) with their
// recursion state in team scratch. The same pass serves both axes through strides:
//   horizontal: along = x (stride 1), across = y (stride w);  vertical: along = y (stride w), across = x.
// Each output k blurs the product of two of the inputs (or one input times 1), so the products of the
// SSIM statistics (a * a, a * b) are formed while loading instead of being stored. A Sink consumes the K
// outputs of each position: WriteSink stores them, ErrorSink (ErrorMaps.hpp) turns them into error terms.
// (Functors hold raw pointers and PODs only: see Planes.hpp.)

#include <kssim/Options.hpp>
#include <kssim/impl/Tiles.hpp>
#include <kssim/impl/ssimulacra2/Constants.hpp>
#include <kssim/impl/ssimulacra2/Planes.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace kssim::impl::s2 {

// Up to three input stacks; input q's plane for output plane p is p % mod[q] (mod 0: p itself), so a single
// reference image can be paired with a batch of distorted ones.
struct IirInputs {
  const float* in[3] = {nullptr, nullptr, nullptr};
  int mod[3] = {0, 0, 0};
};

// Output k blurs x[first[k]] * x[second[k]], where x[0..2] are the inputs and x[3] = 1.
template <int K>
struct IirProducts {
  int first[K];
  int second[K];
};

// Geometry of a pass: `planes` planes of `along` x `across` positions; element (p, i, j) at
// p * plane + i * s_along + j * s_across.
struct AxisGeometry {
  int planes, along, across;
  std::int64_t plane, s_along, s_across;
  KOKKOS_INLINE_FUNCTION std::int64_t at(int p, int i, int j) const {
    return p * plane + i * s_along + j * s_across;
  }
};

// Stores the K outputs.
template <int K>
struct WriteSink {
  static constexpr int acc_per_line = 0;
  float* out[K];
  KOKKOS_INLINE_FUNCTION void init(double*, int, int) const {}
  KOKKOS_INLINE_FUNCTION void put(const AxisGeometry& g, int p, int i, int j, const float (&v)[K], double*, int,
                                  int) const {
    const std::int64_t e = g.at(p, i, j);
    for (int k = 0; k < K; ++k) out[k][e] = v[k];
  }
  KOKKOS_INLINE_FUNCTION void finish(const AxisGeometry&, int, int, const double*, int, int) const {}
};

// x[q] by selects rather than a run-time index, which would move x to local memory on GPUs.
// a * b rounded once to float and never fused into a following addition (an exact double product rounded
// to float): the compiler may contract a * b + c into an FMA on its own, which would change the rounding.
KOKKOS_FORCEINLINE_FUNCTION float mulf(float a, float b) { return float(double(a) * double(b)); }

KOKKOS_FORCEINLINE_FUNCTION float pick(const float (&x)[4], int q) {
  return q == 0 ? x[0] : q == 1 ? x[1] : q == 2 ? x[2] : x[3];
}

template <int K, class Sink>
struct IirPass {
  IirCoefficients c;
  IirInputs inputs;
  IirProducts<K> products;
  AxisGeometry g;
  Sink sink;
  bool blocked;  // the horizontal pass: four outputs at a time (IirCoefficients); vertical: one, fused
  int strip;   // lines per team
  int strips;  // strips per plane

  static constexpr int state_per_line = K * 3 * 2;  // two previous outputs of three recursions per output

  std::size_t scratch_bytes() const {
    return std::size_t(strip) * (Sink::acc_per_line * sizeof(double) + state_per_line * sizeof(float)) + 64;
  }

  template <class Team>
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int p = team.league_rank() / strips;
    const int j0 = (team.league_rank() % strips) * strip;
    const int count = g.across - j0 < strip ? g.across - j0 : strip;
    constexpr int level = Tiles<typename Team::execution_space, float>::scratch_level;
    double* acc = Sink::acc_per_line
                      ? static_cast<double*>(team.team_scratch(level).get_shmem_aligned(
                            std::size_t(Sink::acc_per_line) * strip * sizeof(double), sizeof(double)))
                      : nullptr;
    float* state = static_cast<float*>(
        team.team_scratch(level).get_shmem_aligned(std::size_t(state_per_line) * strip * sizeof(float), sizeof(float)));
    const float* src[3];
    for (int q = 0; q < 3; ++q)
      src[q] = inputs.in[q] ? inputs.in[q] + (inputs.mod[q] ? p % inputs.mod[q] : p) * g.plane : nullptr;
    const int R = c.radius;
    // Every line jj is handled by the same thread and lane at every step (the range's mapping is fixed),
    // so its state needs no barrier between steps.
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count), [&](int jj) {
      for (int s = 0; s < state_per_line; ++s) state[s * strip + jj] = 0.0f;
      sink.init(acc, strip, jj);
    });
    // The input sum of output k at position i of line j: x(i - R - 1) + x(i + R - 1), zero outside.
    auto input_sum = [&](int k, int i, int j) {
      const int lo = i - R - 1, hi = i + R - 1;
      const int a = products.first[k], b = products.second[k];
      float xl[4] = {0.0f, 0.0f, 0.0f, 1.0f}, xh[4] = {0.0f, 0.0f, 0.0f, 1.0f};
      for (int q = 0; q < 3; ++q) {
        if (!src[q]) continue;
        if (lo >= 0) xl[q] = src[q][lo * g.s_along + j * g.s_across];
        if (hi < g.along) xh[q] = src[q][hi * g.s_along + j * g.s_across];
      }
      return (lo >= 0 ? mulf(pick(xl, a), pick(xl, b)) : 0.0f) + (hi < g.along ? mulf(pick(xh, a), pick(xh, b)) : 0.0f);
    };
    // One output per line, in the reference's arithmetic for the pass (see blocked).
    auto single_step = [&](int i) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count), [&](int jj) {
        const int j = j0 + jj;
        float out[K];
        for (int k = 0; k < K; ++k) {
          const float v = input_sum(k, i, j);
          float y[3];
          for (int f = 0; f < 3; ++f) {
            float* s1 = state + ((k * 3 + f) * 2) * strip + jj;  // previous output
            float* s2 = s1 + strip;                              // the one before
            if (blocked) {
              y[f] = mulf(c.n2[f], v) - *s2;
              y[f] = Kokkos::fma(c.prev[f][0], *s1, y[f]);
            } else {
              y[f] = Kokkos::fma(c.n2[f], v, Kokkos::fma(-c.d1[f], *s1, -*s2));
            }
            *s2 = *s1;
            *s1 = y[f];
          }
          out[k] = y[0] + (y[1] + y[2]);
        }
        if (i >= 0) sink.put(g, p, i, j, out, acc, strip, jj);
      });
    };
    // Four outputs i .. i + 3 per line, every input inside the line (blocked passes only).
    auto block_step = [&](int i) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count), [&](int jj) {
        const int j = j0 + jj;
        float out[4][K];
        for (int k = 0; k < K; ++k) {
          float v[4];
          for (int l = 0; l < 4; ++l) v[l] = input_sum(k, i + l, j);
          float o[3][4];
          for (int f = 0; f < 3; ++f) {
            float* s1 = state + ((k * 3 + f) * 2) * strip + jj;
            float* s2 = s1 + strip;
            for (int l = 0; l < 4; ++l) {
              float y = v[0] * c.in[f][l];
              for (int m = 1; m <= l; ++m) y = Kokkos::fma(c.in[f][l - m], v[m], y);
              y = Kokkos::fma(c.prev2[f][l], *s2, y);
              o[f][l] = Kokkos::fma(c.prev[f][l], *s1, y);
            }
            *s2 = o[f][2];
            *s1 = o[f][3];
          }
          for (int l = 0; l < 4; ++l) out[l][k] = o[0][l] + (o[1][l] + o[2][l]);
        }
        for (int l = 0; l < 4; ++l) sink.put(g, p, i + l, j, out[l], acc, strip, jj);
      });
    };
    int i = 1 - R;
    if (blocked) {
      const int aligned = (R + 1 + 3) / 4 * 4;  // the first output of a block
      for (; i < (aligned < g.along ? aligned : g.along); ++i) single_step(i);
      for (; i + 3 < g.along - R + 1; i += 4) block_step(i);
    }
    for (; i < g.along; ++i) single_step(i);
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count),
                         [&](int jj) { sink.finish(g, p, j0 + jj, acc, strip, jj); });
  }
};

// Runs one pass. Strip length: hosts take long strips of contiguous lines (vertical pass) so the lane loop
// vectorises, and short ones across rows (horizontal pass) so the strip's cache lines stay in L1; GPUs take
// 128 lines per team (vector lanes x threads, whatever the backend's lane count).
template <int K, class ExecSpace, class Sink>
void iir_pass(const ExecSpace& exec, const IirCoefficients& c, const IirInputs& inputs,
              const IirProducts<K>& products, const AxisGeometry& g, const Sink& sink, const Options& opts = {}) {
  constexpr bool gpu = is_gpu_space_v<ExecSpace>;
  const bool contiguous = g.s_across == 1;
  const int strip = gpu ? 128 : (contiguous ? 256 : 16);
  IirPass<K, Sink> pass{c, inputs, products, g, sink, !contiguous, strip, ceil_div(g.across, strip)};
  constexpr int level = Tiles<ExecSpace, float>::scratch_level;
  const int inner = gpu ? 32 : 1;
  auto policy = make_team_policy(exec, g.planes * pass.strips, gpu ? strip / inner : 1, inner, level,
                                 pass.scratch_bytes(), opts, pass, Kokkos::ParallelForTag{});
  Kokkos::parallel_for("kssim::ssimulacra2::recursive_blur", policy, pass);
}

}  // namespace kssim::impl::s2
