// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The knobs of SSIM: window, Gaussian sigma, stabilising constants, data range and padding.

#include <cmath>
#include <cstddef>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kssim {

// How the map's support relates to the image.
enum class Padding {
  Valid,      // the map exists where the whole window fits: (H-w+1) x (W-w+1) (pytorch-msssim, scikit-image's
              // default crop)
  Same,       // zero padding outside the image, the map is H x W (the 3D Gaussian Splatting loss)
  Reflect,    // the image mirrored about its edge pixels, which are not repeated (x[-1] = x[1], PyTorch's
              // "reflect"); the map is H x W (torchmetrics' SSIM). Every extent must exceed window_size / 2.
  Replicate   // the edge pixels repeated outward (x[-1] = x[0]); the map is H x W (MATLAB's ssim)
};

// How the forward and backward passes are scheduled on the device (impl/schedules/Router.hpp chooses for Auto).
enum class Schedule {
  Auto,    // the router's choice for the shape, window, value type and backend
  Stages,  // one kernel per separable stage (row blur, column blur, adjoint column, adjoint row): any problem
  Fused    // one kernel per pass (forward, backward) over tiles in team scratch: 2D images whose tile fits;
           // volumes: those kernels per depth slice, the depth pass a stage (GPUs: float, window_size 11)
};

// Which gradients a training object (SSIM.hpp and the objects like it) prepares for: each costs one more
// plane of workspace and traffic.
enum class Gradients { None, Image1, Image2, Both };

// Whether a training object's backward() overwrites the gradient Views or adds to them (combined losses).
enum class Accumulate { No, Yes };

// How a mask (a weight per pixel in [0, 1]) enters masked SSIM (kssim/MaskedSSIM.hpp).
enum class MaskMode {
  Weights,    // the map's mean becomes its weighted mean, each map pixel weighted by the mask at its window's
              // centre; the window statistics are SSIM's own
  Normalized  // also the window statistics are masked (normalized convolution): mu = B(m x) / B(m), and
              // likewise the second moments, so pixels of weight 0 never enter a window
};

// Which Gaussian window SSIM is defined with.
enum class Window {
  Exact,   // exp(-(t-r)^2 / (2 sigma^2)) / sum, computed in double and rounded once to the compute type: the
           // window sums to 1
  Float32  // the float32 weights of fused-ssim and of the PyTorch references (pytorch-msssim, the 3D Gaussian
           // Splatting loss): each exp rounded to float32, their sum rounded to float32, each weight their
           // float32 quotient (for 11 / 1.5 fused-ssim's constants, summing to 1 - 3.1e-8 per axis), with
           // their raw moments sigma^2 = B(x^2) - B(x)^2 of that window. On uncorrelated noise the mean then
           // moves by ~2e-7 from Exact's, as theirs does (impl/stages/RawWindow.hpp). SSIM, the fused
           // L1 + SSIM loss and MS-SSIM (every scale's cs and SSIM, as pytorch-msssim); masked SSIM takes
           // Exact only.
};

// Largest supported window. Bounded so that a tile and its halo fit in one team's scratch on every backend.
inline constexpr int max_window_size = 31;

struct Options {
  int window_size = 11;      // odd, 3 <= window_size <= max_window_size
  double sigma = 1.5;        // std of the Gaussian window, > 0
  double k1 = 0.01;          // C1 = (k1 * data_range)^2
  double k2 = 0.03;          // C2 = (k2 * data_range)^2
  double data_range = 1.0;   // L: the dynamic range of the pixel values, > 0
  Padding padding = Padding::Valid;
  Window window = Window::Exact;  // Float32: the weights and moments of fused-ssim and pytorch-msssim
  // Which kernels run (results agree to rounding; tests and benchmarks force each). Forcing Fused on a
  // problem it cannot run (volumes, windows whose tile exceeds the team scratch) throws.
  Schedule schedule = Schedule::Auto;
  // Launch shape; 0 lets the backend choose. Results do not depend on these beyond rounding of the
  // per-team partial sums of the mean (tests sweep them).
  int team_size = 0;
  int vector_length = 0;
  // The most bytes of workspace SSIM may allocate beyond the images, map and gradients (kssim::ssim*,
  // kssim::SSIM). A problem that needs more, or has more than 2^30 elements, runs in pieces: groups of
  // images or channels, else slabs along the outermost spatial axis with the window's halo
  // (impl/ssim/Slabs.hpp). 0: half the memory free when the workspace is planned (hosts: at most an eighth of
  // the machine's); problems under 1 GiB of workspace never split for it.
  std::size_t max_workspace_bytes = 0;

  // Equal when every field is: caches and the bindings key their plans on options with this and
  // std::hash<kssim::Options>.
  friend bool operator==(const Options&, const Options&) = default;
};

namespace impl {
// Boost's hash_combine mixing: enough to spread a handful of small fields over a hash table.
inline void hash_combine(std::size_t& seed, std::size_t h) { seed ^= h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }
template <class... Fields>
std::size_t hash_fields(const Fields&... fields) {
  std::size_t seed = 0;
  (hash_combine(seed, std::hash<Fields>{}(fields)), ...);
  return seed;
}
}  // namespace impl

inline const char* to_string(Padding p) {
  return p == Padding::Valid ? "valid" : p == Padding::Same ? "same" : p == Padding::Reflect ? "reflect" : "replicate";
}
inline const char* to_string(Schedule s) {
  return s == Schedule::Auto ? "auto" : s == Schedule::Stages ? "stages" : "fused";
}
inline const char* to_string(Window w) { return w == Window::Exact ? "exact" : "float32"; }
inline const char* to_string(MaskMode m) { return m == MaskMode::Weights ? "weights" : "normalized"; }

// Throws std::invalid_argument naming the offending option by its field name: the one set of rules, which
// the command-line tool and the Python package report in their own option names.
inline void validate(const Options& o) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("kssim: " + what); };
  if (o.window_size < 3 || o.window_size > max_window_size || o.window_size % 2 == 0) {
    std::ostringstream s;
    s << "window_size must be odd and in [3, " << max_window_size << "], got " << o.window_size;
    fail(s.str());
  }
  auto number = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  if (!(o.sigma > 0) || !std::isfinite(o.sigma)) fail("sigma must be a finite number > 0, got " + number(o.sigma));
  if (!(o.data_range > 0) || !std::isfinite(o.data_range))
    fail("data_range must be a finite number > 0, got " + number(o.data_range));
  if (!(o.k1 >= 0) || !std::isfinite(o.k1)) fail("k1 must be a finite number >= 0, got " + number(o.k1));
  if (!(o.k2 >= 0) || !std::isfinite(o.k2)) fail("k2 must be a finite number >= 0, got " + number(o.k2));
  if (o.k1 == 0 && o.k2 == 0) fail("k1 and k2 cannot both be 0 (the map would divide by zero)");
  if (o.window != Window::Exact && o.window != Window::Float32) fail("window must be Window::Exact or Window::Float32");
  if (o.padding != Padding::Valid && o.padding != Padding::Same && o.padding != Padding::Reflect &&
      o.padding != Padding::Replicate)
    fail("padding must be Padding::Valid, Same, Reflect or Replicate");
  if (o.team_size < 0 || o.vector_length < 0) fail("team_size and vector_length must be >= 0");
  if (o.vector_length & (o.vector_length - 1)) fail("vector_length must be a power of two");
}

}  // namespace kssim

template <>
struct std::hash<kssim::Options> {
  std::size_t operator()(const kssim::Options& o) const noexcept {
    return kssim::impl::hash_fields(o.window_size, o.sigma, o.k1, o.k2, o.data_range, o.padding, o.window, o.schedule,
                                    o.team_size, o.vector_length, o.max_workspace_bytes);
  }
};
