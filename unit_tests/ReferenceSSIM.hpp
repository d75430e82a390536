// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// An independent float64 SSIM reference for the tests: direct (non-separable) correlation with the full
// 2D or 3D Gaussian window, the textbook formula, and the analytic gradient written in terms of
// (mu, sigma) at every map pixel. It shares no code with the library's kernels.

#include <cmath>
#include <cstddef>
#include <vector>

namespace kssim_test {

struct Shape {
  int n = 1, c = 1, d = 1, h = 1, w = 1;
  bool volumetric = false;
  std::size_t size() const { return std::size_t(n) * c * d * h * w; }
  std::size_t index(int in, int ic, int id, int ih, int iw) const {
    return (((std::size_t(in) * c + ic) * d + id) * h + ih) * w + iw;
  }
};

// f(n, c, d, h, w) for every pixel of images of shape s, in memory order.
template <class F>
void for_each_pixel(const Shape& s, const F& f) {
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int d = 0; d < s.d; ++d)
        for (int h = 0; h < s.h; ++h)
          for (int w = 0; w < s.w; ++w) f(n, c, d, h, w);
}

// What a same-size map's windows read outside the image: zeros, the mirror image without repeating the edge
// pixel (x[-1] = x[1]), or the edge pixel (x[-1] = x[0]).
enum class Outside { Zero, Reflect, Replicate };

struct ReferenceOptions {
  int window = 11;
  double sigma = 1.5, k1 = 0.01, k2 = 0.03, data_range = 1.0;
  bool same = false;  // a map of the image's size, its windows reading `outside` past the edges
  Outside outside = Outside::Zero;
  // The window of kssim::Window::Float32 (fused-ssim's and pytorch-msssim's float32 weights), whose raw
  // moments B(x^2) - B(x)^2 differ from the centred ones when the window does not sum to 1.
  bool float32_window = false;
};

// The shape of the map of images of shape s: the same, or smaller by the window less one along each
// spatial axis (valid padding).
inline Shape reference_map_shape(const Shape& s, const ReferenceOptions& o) {
  const int shrink = o.same ? 0 : o.window - 1;
  Shape m = s;
  m.d = s.volumetric ? s.d - shrink : 1;
  m.h = s.h - shrink;
  m.w = s.w - shrink;
  return m;
}

struct ReferenceResult {
  Shape map_shape;
  std::vector<double> map;         // (N, C, Do, Ho, Wo)
  double mean = 0;
  std::vector<double> per_image;   // (N)
  std::vector<double> per_channel; // (N, C)
  std::vector<double> grad1, grad2;  // d mean / d x, d mean / d y, (N, C, D, H, W)
};

std::vector<double> reference_gaussian(int size, double sigma);

// The float32 weights PyTorch's SSIM references compute, written from their definition: each exp rounded to
// float, their sum (exact, in long double) rounded to float, each weight the float quotient.
std::vector<double> reference_float32_gaussian(int size, double sigma);

// The pixel index that position q of an axis of n pixels stands for, or -1 for a zero.
int reference_source(int q, int n, Outside outside);

ReferenceResult reference_ssim(const Shape& s, const std::vector<double>& x, const std::vector<double>& y,
                                      const ReferenceOptions& o, bool with_gradients);

}  // namespace kssim_test
