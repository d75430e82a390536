// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The autograd formulas of torch.ops.kssim.ssim, l1_ssim_loss, ms_ssim and masked_ssim: their backwards are
// the operators <name>_backward. The mask of masked_ssim gets no gradient (the Python API refuses a mask
// that requires one).
//
// Registered in C++ (the Autograd dispatch key) rather than with torch.library.register_autograd, whose
// Python layers cost about 110 us more per training step on the host: perf_tests/torch_step_overhead.py on
// this project's 2 loaded cores, alternating runs, "operator with its registered autograd" 132-134 us per
// step here against 245-252 us with register_autograd (kssim.fused_ssim 152-159 against 267-291 us). At
// small images that is more than the GPU's work. torch.compile traces through it all the same: forward and
// backward are dispatcher calls, whose fake kernels the package registers (kssim/_registrations.py).

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kssim::torch_binding {
namespace {

// window_size, sigma, k1, k2, data_range, padding (kssim::Padding's code), per_image, float32_window
using Options = std::tuple<std::int64_t, double, double, double, double, std::int64_t, bool, bool>;

at::Tensor call_forward(const at::Tensor& img1, const at::Tensor& img2, const Options& o, std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::ssim", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t, double, double,
                                               double, double, std::int64_t, bool, std::int64_t, bool)>();
  const auto& [window, sigma, k1, k2, range, padding, per_image, float32_window] = o;
  return op.call(img1, img2, window, sigma, k1, k2, range, padding, per_image, gradients, float32_window);
}

std::tuple<at::Tensor, at::Tensor> call_backward(const at::Tensor& grad, const at::Tensor& img1,
                                                 const at::Tensor& img2, const Options& o, std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::ssim_backward", "")
                             .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                       const at::Tensor&, std::int64_t, double, double,
                                                                       double, double, std::int64_t, bool, std::int64_t,
                                                                       bool)>();
  const auto& [window, sigma, k1, k2, range, padding, per_image, float32_window] = o;
  return op.call(grad, img1, img2, window, sigma, k1, k2, range, padding, per_image, gradients, float32_window);
}

// What a forward keeps for its backward, saved and loaded in one call each: the images (and mask), the
// options (a tuple, in ctx->saved_data by position: "option0", ...) and the `gradients` hint of the forward.
template <class Tuple>
struct SavedInputs {
  at::Tensor img1, img2;
  Tuple options;
  std::int64_t gradients = 0;
  at::Tensor mask;  // masked SSIM only
};
template <class Tuple>
void save_inputs(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                 const Tuple& o, std::int64_t gradients, const at::Tensor* mask = nullptr) {
  if (mask)
    ctx->save_for_backward({img1, img2, *mask});
  else
    ctx->save_for_backward({img1, img2});
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((ctx->saved_data["option" + std::to_string(I)] = std::get<I>(o)), ...);
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  ctx->saved_data["gradients"] = gradients;
}
template <class Tuple>
SavedInputs<Tuple> load_inputs(torch::autograd::AutogradContext* ctx) {
  const auto saved = ctx->get_saved_variables();
  Tuple o = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return Tuple{ctx->saved_data.at("option" + std::to_string(I)).template to<std::tuple_element_t<I, Tuple>>()...};
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  return {saved[0], saved[1], std::move(o), ctx->saved_data.at("gradients").toInt(),
          saved.size() > 2 ? saved[2] : at::Tensor()};
}

// The gradients list of a backward() whose first two inputs are the images: `backward(computed)`
// returns the gradients of img1 and img2 for the `gradients` bits `computed`. That is the forward's
// `gradients` (`hint`) when it covers what is wanted: the same cached workspace, whose partial derivatives
// from that forward are then reused (an extra gradient costs less than running it again).
template <class Backward>
torch::autograd::variable_list image_gradients(torch::autograd::AutogradContext* ctx, std::int64_t hint,
                                               const Backward& backward) {
  const std::int64_t wanted = (ctx->needs_input_grad(0) ? 1 : 0) | (ctx->needs_input_grad(1) ? 2 : 0);
  // One per input of the longest forward() (12); autograd drops the undefined ones beyond a function's inputs.
  torch::autograd::variable_list out(12);
  if (wanted == 0) return out;
  auto [grad1, grad2] = backward((hint & wanted) == wanted ? hint : wanted);
  if (wanted & 1) out[0] = grad1;
  if (wanted & 2) out[1] = grad2;
  return out;
}

// The bodies of the autograd functions' forward() and backward(), given their operator calls: forward keeps
// the images, options and `gradients` hint, then runs the operator below autograd; backward runs the backward
// operator on what the forward kept.
template <class Tuple, class Call>
at::Tensor saved_forward(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                         const Tuple& o, std::int64_t gradients, const Call& call) {
  save_inputs(ctx, img1, img2, o, gradients);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return call(img1, img2, o, gradients);
}
template <class Tuple, class Call>
torch::autograd::variable_list saved_backward(torch::autograd::AutogradContext* ctx,
                                              const torch::autograd::variable_list& grads, const Call& call) {
  const auto in = load_inputs<Tuple>(ctx);
  return image_gradients(ctx, in.gradients, [&](std::int64_t computed) {
    return call(grads[0], in.img1, in.img2, in.options, computed);
  });
}

// An autograd function of two images with options of type Tuple: backward() runs Backward (the backward
// operator's call) on what forward() kept (saved_forward).
template <class Derived, class Tuple, auto Backward>
class ImageFunction : public torch::autograd::Function<Derived> {
 public:
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return saved_backward<Tuple>(ctx, grads, Backward);
  }
};

class SsimFunction : public ImageFunction<SsimFunction, Options, call_backward> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                            std::int64_t window_size, double sigma, double k1, double k2, double data_range,
                            std::int64_t padding, bool per_image, std::int64_t gradients, bool float32_window) {
    const Options o{window_size, sigma, k1, k2, data_range, padding, per_image, float32_window};
    return saved_forward(ctx, img1, img2, o, gradients, call_forward);
  }
};

// The fused L1 + SSIM loss: (l1_weight, window .. padding, float32_window).
using LossOptions = std::tuple<double, std::int64_t, double, double, double, double, std::int64_t, bool>;

at::Tensor call_loss_forward(const at::Tensor& img1, const at::Tensor& img2, const LossOptions& o,
                             std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::l1_ssim_loss", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, std::int64_t, double,
                                               double, double, double, std::int64_t, std::int64_t, bool)>();
  const auto& [weight, window, sigma, k1, k2, range, padding, float32_window] = o;
  return op.call(img1, img2, weight, window, sigma, k1, k2, range, padding, gradients, float32_window);
}

std::tuple<at::Tensor, at::Tensor> call_loss_backward(const at::Tensor& grad, const at::Tensor& img1,
                                                      const at::Tensor& img2, const LossOptions& o,
                                                      std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::l1_ssim_loss_backward", "")
                             .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                       const at::Tensor&, double, std::int64_t, double,
                                                                       double, double, double, std::int64_t,
                                                                       std::int64_t, bool)>();
  const auto& [weight, window, sigma, k1, k2, range, padding, float32_window] = o;
  return op.call(grad, img1, img2, weight, window, sigma, k1, k2, range, padding, gradients, float32_window);
}

class L1SsimLossFunction : public ImageFunction<L1SsimLossFunction, LossOptions, call_loss_backward> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                            double l1_weight, std::int64_t window_size, double sigma, double k1, double k2,
                            double data_range, std::int64_t padding, std::int64_t gradients, bool float32_window) {
    const LossOptions o{l1_weight, window_size, sigma, k1, k2, data_range, padding, float32_window};
    return saved_forward(ctx, img1, img2, o, gradients, call_loss_forward);
  }
};

at::Tensor l1_ssim_loss_autograd(const at::Tensor& img1, const at::Tensor& img2, double l1_weight,
                                 std::int64_t window_size, double sigma, double k1, double k2, double data_range,
                                 std::int64_t padding, std::int64_t gradients, bool float32_window) {
  return L1SsimLossFunction::apply(img1, img2, l1_weight, window_size, sigma, k1, k2, data_range, padding, gradients,
                                   float32_window);
}

at::Tensor ssim_autograd(const at::Tensor& img1, const at::Tensor& img2, std::int64_t window_size, double sigma,
                         double k1, double k2, double data_range, std::int64_t padding, bool per_image,
                         std::int64_t gradients, bool float32_window) {
  return SsimFunction::apply(img1, img2, window_size, sigma, k1, k2, data_range, padding, per_image, gradients,
                             float32_window);
}

// MS-SSIM: (window_size, sigma, k1, k2, data_range, weights, per_image).
using MsOptions = std::tuple<std::int64_t, double, double, double, double, std::vector<double>, bool>;

at::Tensor call_ms_forward(const at::Tensor& img1, const at::Tensor& img2, const MsOptions& o,
                           std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::ms_ssim", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t, double, double,
                                               double, double, c10::ArrayRef<double>, bool, std::int64_t)>();
  const auto& [window, sigma, k1, k2, range, weights, per_image] = o;
  return op.call(img1, img2, window, sigma, k1, k2, range, weights, per_image, gradients);
}

std::tuple<at::Tensor, at::Tensor> call_ms_backward(const at::Tensor& grad, const at::Tensor& img1,
                                                    const at::Tensor& img2, const MsOptions& o,
                                                    std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::ms_ssim_backward", "")
                             .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                       const at::Tensor&, std::int64_t, double, double,
                                                                       double, double, c10::ArrayRef<double>, bool,
                                                                       std::int64_t)>();
  const auto& [window, sigma, k1, k2, range, weights, per_image] = o;
  return op.call(grad, img1, img2, window, sigma, k1, k2, range, weights, per_image, gradients);
}

class MsSsimFunction : public ImageFunction<MsSsimFunction, MsOptions, call_ms_backward> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                            std::int64_t window_size, double sigma, double k1, double k2, double data_range,
                            c10::ArrayRef<double> weights, bool per_image, std::int64_t gradients) {
    const MsOptions o{window_size, sigma, k1, k2, data_range, weights.vec(), per_image};
    return saved_forward(ctx, img1, img2, o, gradients, call_ms_forward);
  }
};

at::Tensor ms_ssim_autograd(const at::Tensor& img1, const at::Tensor& img2, std::int64_t window_size, double sigma,
                            double k1, double k2, double data_range, c10::ArrayRef<double> weights, bool per_image,
                            std::int64_t gradients) {
  return MsSsimFunction::apply(img1, img2, window_size, sigma, k1, k2, data_range, weights.vec(), per_image,
                               gradients);
}

// Masked SSIM: (normalized, window_size, sigma, k1, k2, data_range, padding); the mask is saved with the
// images.
using MaskedOptions = std::tuple<bool, std::int64_t, double, double, double, double, std::int64_t>;

at::Tensor call_masked_forward(const at::Tensor& img1, const at::Tensor& img2, const at::Tensor& mask,
                               const MaskedOptions& o, std::int64_t gradients) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("kssim::masked_ssim", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool,
                                               std::int64_t, double, double, double, double, std::int64_t,
                                               std::int64_t)>();
  const auto& [normalized, window, sigma, k1, k2, range, padding] = o;
  return op.call(img1, img2, mask, normalized, window, sigma, k1, k2, range, padding, gradients);
}

std::tuple<at::Tensor, at::Tensor> call_masked_backward(const at::Tensor& grad, const at::Tensor& img1,
                                                        const at::Tensor& img2, const at::Tensor& mask,
                                                        const MaskedOptions& o, std::int64_t gradients) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("kssim::masked_ssim_backward", "")
          .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                    const at::Tensor&, bool, std::int64_t, double, double, double,
                                                    double, std::int64_t, std::int64_t)>();
  const auto& [normalized, window, sigma, k1, k2, range, padding] = o;
  return op.call(grad, img1, img2, mask, normalized, window, sigma, k1, k2, range, padding, gradients);
}

class MaskedSsimFunction : public torch::autograd::Function<MaskedSsimFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                            const at::Tensor& mask, bool normalized, std::int64_t window_size, double sigma,
                            double k1, double k2, double data_range, std::int64_t padding, std::int64_t gradients) {
    const MaskedOptions o{normalized, window_size, sigma, k1, k2, data_range, padding};
    save_inputs(ctx, img1, img2, o, gradients, &mask);
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return call_masked_forward(img1, img2, mask, o, gradients);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto in = load_inputs<MaskedOptions>(ctx);
    return image_gradients(ctx, in.gradients, [&](std::int64_t computed) {
      return call_masked_backward(grads[0], in.img1, in.img2, in.mask, in.options, computed);
    });
  }
};

at::Tensor masked_ssim_autograd(const at::Tensor& img1, const at::Tensor& img2, const at::Tensor& mask,
                                bool normalized, std::int64_t window_size, double sigma, double k1, double k2,
                                double data_range, std::int64_t padding, std::int64_t gradients) {
  return MaskedSsimFunction::apply(img1, img2, mask, normalized, window_size, sigma, k1, k2, data_range, padding,
                                   gradients);
}

}  // namespace
}  // namespace kssim::torch_binding

TORCH_LIBRARY_IMPL(kssim, Autograd, m) {
  m.impl("ssim", &kssim::torch_binding::ssim_autograd);
  m.impl("l1_ssim_loss", &kssim::torch_binding::l1_ssim_loss_autograd);
  m.impl("ms_ssim", &kssim::torch_binding::ms_ssim_autograd);
  m.impl("masked_ssim", &kssim::torch_binding::masked_ssim_autograd);
}
