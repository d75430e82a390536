// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Stage 4: the recursive Gaussian (sigma 1.5) along one axis of a stack of planes. The recursion is
// stateful along the axis, so each team owns a strip of lines across it and walks the axis once; the lines
// of the strip run in parallel (vector lanes on GPUs, an `omp simd` loop on hosts) with their recursion
// state in team scratch. The same pass serves both axes through strides:
//   horizontal: along = x (stride 1), across = y (stride w);  vertical: along = y (stride w), across = x.
// The statistics' products (a * a, a * b) are formed while loading (Mode) instead of being stored. A Sink
// consumes the K outputs of each position: WriteSink stores them, ErrorSink (ErrorMaps.hpp) turns them into
// error terms. The float arithmetic is the reference tool's, operation for operation (IirCoefficients):
// the score is sensitive to it at the 1e-2 level.
// (Functors hold raw pointers and PODs only: see Planes.hpp.)

#include <kssim/Options.hpp>
#include <kssim/impl/core/Launch.hpp>
#include <kssim/impl/core/Tiles.hpp>
#include <kssim/impl/core/Vectorize.hpp>
#include <kssim/impl/ssimulacra2/Constants.hpp>
#include <kssim/impl/ssimulacra2/Planes.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <stdexcept>

namespace kssim::impl::s2 {

// a * b rounded to float and never fused into a following addition: compilers contract a * b + c into an
// FMA on their own (GCC by default, across statements, and differently in different instantiations: a
// cached reference then no longer matched itself; nvcc and hipcc by default too), which changes the
// rounding. Hosts: fma(a, b, +0) is the rounded product and cannot be folded back into a plain multiply
// (it differs for a product of -0). GPUs: the round-to-nearest multiply intrinsic, never contracted.
KOKKOS_FORCEINLINE_FUNCTION float mulf(float a, float b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __fmul_rn(a, b);
#else
  return Kokkos::fma(a, b, 0.0f);
#endif
}

// What the K outputs blur:
//   Plain: input k (K inputs);  Reference: a, a * a (input a);
//   Distorted: b, b * b, a * b (inputs a: the reference, one image for every plane p, read at p % 3; b).
enum class IirMode { Plain, Reference, Distorted };

template <IirMode M, int K>
struct IirModeInfo {
  static constexpr int inputs = M == IirMode::Plain ? K : (M == IirMode::Reference ? 1 : 2);
  static_assert(M == IirMode::Plain || (M == IirMode::Reference ? K == 2 : K == 3));
  KOKKOS_FORCEINLINE_FUNCTION static void products(const float (&x)[inputs], float (&v)[K]) {
    if constexpr (M == IirMode::Plain) {
      for (int k = 0; k < K; ++k) v[k] = x[k];
    } else if constexpr (M == IirMode::Reference) {
      v[0] = x[0];
      v[1] = mulf(x[0], x[0]);
    } else {
      v[0] = x[1];
      v[1] = mulf(x[1], x[1]);
      v[2] = mulf(x[0], x[1]);
    }
  }
};

// Geometry of a pass: `planes` planes of `along` x `across` positions; element (p, i, j) at
// p * plane + i * s_along + j * s_across.
struct AxisGeometry {
  int planes, along, across;
  std::int64_t plane, s_along, s_across;
};

// Stores the K outputs.
template <int K>
struct WriteSink {
  static constexpr int acc_per_line = 0;
  float* out[K];
  struct Bound {
    float* out[K];
  };
  KOKKOS_INLINE_FUNCTION Bound bind(const AxisGeometry& g, int p) const {
    Bound b{};
    for (int k = 0; k < K; ++k) b.out[k] = out[k] + p * g.plane;
    return b;
  }
  KOKKOS_FORCEINLINE_FUNCTION static void init(double*, int, int) {}
  KOKKOS_FORCEINLINE_FUNCTION static void put(const Bound& b, std::int64_t e, const float (&v)[K], double*, int, int) {
    for (int k = 0; k < K; ++k) b.out[k][e] = v[k];
  }
  KOKKOS_FORCEINLINE_FUNCTION static void finish(const Bound&, const AxisGeometry&, int, const double*, int, int) {}
};

// Small fixed-trip loops inside the lane loop: unrolled, so that GCC vectorises the lane loop around them.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define KSSIM_S2_UNROLL _Pragma("GCC unroll 16")
#else
#define KSSIM_S2_UNROLL
#endif

// Blocked: the horizontal pass, four outputs at a time (IirCoefficients); otherwise one, fused.
template <int K, IirMode M, bool Blocked, class Sink>
struct IirPass {
  using Info = IirModeInfo<M, K>;
  static constexpr int NI = Info::inputs;
  IirCoefficients c;
  const float* in[NI];
  AxisGeometry g;
  Sink sink;
  int strip;     // lines per team
  int strips;    // strips per plane

  static constexpr int state_per_line = K * 3 * 2;  // two previous outputs of three recursions per output

  std::size_t scratch_bytes() const {
    return std::size_t(strip) * (Sink::acc_per_line * sizeof(double) + state_per_line * sizeof(float)) + 64;
  }

  // Element (i, j) of a plane. The stride that is 1 is fixed at compile time: the blocked (horizontal) pass
  // walks along contiguous rows, the fused (vertical) one across contiguous lines (iir_pass chooses so).
  // With a run-time stride of 1, GCC loaded the vertical pass's lanes one by one, as for a gather.
  KOKKOS_FORCEINLINE_FUNCTION static std::int64_t at(const AxisGeometry& g, int i, int j) {
    if constexpr (Blocked)
      return i + j * g.s_across;
    else
      return i * g.s_along + j;
  }

  // The K input sums x(i - R - 1) + x(i + R - 1) of line j (zero outside the line when Edge).
  template <bool Edge>
  KOKKOS_FORCEINLINE_FUNCTION static void sums(const float* const (&src)[NI], const AxisGeometry& g, int R, int i, int j,
                                               float (&v)[K]) {
    const int lo = i - R - 1, hi = i + R - 1;
    float xl[NI], xh[NI];
    KSSIM_S2_UNROLL
    for (int q = 0; q < NI; ++q) {
      xl[q] = (!Edge || lo >= 0) ? src[q][at(g, lo, j)] : 0.0f;
      xh[q] = (!Edge || hi < g.along) ? src[q][at(g, hi, j)] : 0.0f;
    }
    float vl[K], vh[K];
    Info::products(xl, vl);
    Info::products(xh, vh);
    KSSIM_S2_UNROLL
    for (int k = 0; k < K; ++k) v[k] = vl[k] + vh[k];  // 0 + x = x: a missing side changes nothing
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
    const float* src[NI];
    for (int q = 0; q < NI; ++q) src[q] = in[q] + (M == IirMode::Distorted && q == 0 ? p % 3 : p) * g.plane;
    const typename Sink::Bound out = sink.bind(g, p);
    // Local copies: stores to the planes and the scratch cannot alias them, so they stay in registers.
    const IirCoefficients c = this->c;
    const AxisGeometry g = this->g;
    const int R = c.radius, S = strip;
    // Every line jj is handled by the same thread and lane at every step (the range's mapping is fixed),
    // so its state needs no barrier between steps.
    for_lines(team, count, [&](int jj) KSSIM_S2_INLINE_LAMBDA {
      for (int s = 0; s < state_per_line; ++s) state[s * S + jj] = 0.0f;
      Sink::init(acc, S, jj);
    });
    // One output per line. Edge: some input is outside the line, or the output is not yet in it.
    auto single_step = [&](auto edge, int i) {
      constexpr bool Edge = decltype(edge)::value;
      for_lines(team, count, [&](int jj) KSSIM_S2_INLINE_LAMBDA {
        const int j = j0 + jj;
        float v[K], o[K];
        sums<Edge>(src, g, R, i, j, v);
        KSSIM_S2_UNROLL
        for (int k = 0; k < K; ++k) {
          float y[3];
          KSSIM_S2_UNROLL
          for (int f = 0; f < 3; ++f) {
            float* s1 = state + ((k * 3 + f) * 2) * S + jj;  // previous output
            float* s2 = s1 + S;                              // the one before
            if constexpr (Blocked) {
              y[f] = Kokkos::fma(c.prev[f][0], *s1, mulf(c.n2[f], v[k]) - *s2);
            } else {
              y[f] = Kokkos::fma(c.n2[f], v[k], Kokkos::fma(-c.d1[f], *s1, -*s2));
            }
            *s2 = *s1;
            *s1 = y[f];
          }
          o[k] = y[0] + (y[1] + y[2]);
        }
        if (!Edge || i >= 0) Sink::put(out, at(g, i, j), o, acc, S, jj);
      });
    };
    // Four outputs i .. i + 3 per line, every input inside the line (blocked passes only).
    auto block_step = [&](int i) {
      for_lines(team, count, [&](int jj) KSSIM_S2_INLINE_LAMBDA {
        const int j = j0 + jj;
        float v[4][K];
        KSSIM_S2_UNROLL
        for (int l = 0; l < 4; ++l) sums<false>(src, g, R, i + l, j, v[l]);
        float o[4][K];
        KSSIM_S2_UNROLL
        for (int k = 0; k < K; ++k) {
          float y[3][4];
          KSSIM_S2_UNROLL
          for (int f = 0; f < 3; ++f) {
            float* s1 = state + ((k * 3 + f) * 2) * S + jj;
            float* s2 = s1 + S;
            const float p1 = *s1, p2 = *s2;
            KSSIM_S2_UNROLL
            for (int l = 0; l < 4; ++l) {
              float t = mulf(v[0][k], c.in[f][l]);
              KSSIM_S2_UNROLL
              for (int m = 1; m <= l; ++m) t = Kokkos::fma(c.in[f][l - m], v[m][k], t);
              t = Kokkos::fma(c.prev2[f][l], p2, t);
              y[f][l] = Kokkos::fma(c.prev[f][l], p1, t);
            }
            *s2 = y[f][2];
            *s1 = y[f][3];
          }
          KSSIM_S2_UNROLL
          for (int l = 0; l < 4; ++l) o[l][k] = y[0][l] + (y[1][l] + y[2][l]);
        }
        KSSIM_S2_UNROLL
        for (int l = 0; l < 4; ++l) Sink::put(out, at(g, i + l, j), o[l], acc, S, jj);
      });
    };
    using edge = std::true_type;
    using inside = std::false_type;
    int i = 1 - R;
    if constexpr (Blocked) {
      const int aligned = (R + 1 + 3) / 4 * 4;  // the first output of a block, as in the tool
      for (; i < (aligned < g.along ? aligned : g.along); ++i) single_step(edge{}, i);
      for (; i + 3 < g.along - R + 1; i += 4) block_step(i);
    } else {
      for (; i < (R + 1 < g.along ? R + 1 : g.along); ++i) single_step(edge{}, i);
      for (; i < g.along - R + 1; ++i) single_step(inside{}, i);
    }
    for (; i < g.along; ++i) single_step(edge{}, i);
    for_lines(team, count, [&](int jj) KSSIM_S2_INLINE_LAMBDA { Sink::finish(out, g, j0 + jj, acc, S, jj); });
  }
};

// Runs one pass. Strip length: hosts take long strips of contiguous lines (vertical pass) so the lane loop
// vectorises, and short ones across rows (horizontal pass) so the strip's cache lines stay in L1; GPUs take
// 32 lines per team (one lane each): a pass has only planes x lines independent recursions (5760 for the
// vertical pass of a 1080p image), so small teams spread them over more multiprocessors. (Not yet timed
// on a GPU.)
template <int K, IirMode M, class ExecSpace, class Sink>
void iir_pass(const ExecSpace& exec, const IirCoefficients& c, const float* const (&inputs)[IirModeInfo<M, K>::inputs],
              const AxisGeometry& g, const Sink& sink, const Options& opts = {}) {
  constexpr bool gpu = is_gpu_space_v<ExecSpace>;
  const bool contiguous = g.s_across == 1;
  if (!contiguous && g.s_along != 1)
    throw std::invalid_argument("kssim: ssimulacra2: a blur pass needs unit stride along or across its lines");
  const int strip = gpu ? 32 : (contiguous ? 256 : 16);
  auto run = [&](auto blocked) {
    IirPass<K, M, decltype(blocked)::value, Sink> pass{c, {}, g, sink, strip, ceil_div(g.across, strip)};
    for (int q = 0; q < IirModeInfo<M, K>::inputs; ++q) pass.in[q] = inputs[q];
    constexpr int level = Tiles<ExecSpace, float>::scratch_level;
    const int inner = gpu ? 32 : 1;
    auto policy = make_team_policy(exec, g.planes * pass.strips, gpu ? strip / inner : 1, inner, level,
                                   pass.scratch_bytes(), opts, pass, Kokkos::ParallelForTag{});
    launch(decltype(blocked)::value ? "kssim::ssimulacra2::blur_rows" : "kssim::ssimulacra2::blur_columns", policy,
           pass);
  };
  if (contiguous)
    run(std::false_type{});
  else
    run(std::true_type{});
}

}  // namespace kssim::impl::s2
