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
#include <tuple>
#include <utility>
#include <vector>

namespace kssim::torch_binding {
namespace {

// The operators of a metric (forward and backward names), for MetricFunction.
struct SsimOps {
  static constexpr const char* forward = "kssim::ssim";
  static constexpr const char* backward = "kssim::ssim_backward";
};
struct L1SsimLossOps {
  static constexpr const char* forward = "kssim::l1_ssim_loss";
  static constexpr const char* backward = "kssim::l1_ssim_loss_backward";
};
struct MsSsimOps {
  static constexpr const char* forward = "kssim::ms_ssim";
  static constexpr const char* backward = "kssim::ms_ssim_backward";
};
struct MaskedSsimOps {
  static constexpr const char* forward = "kssim::masked_ssim";
  static constexpr const char* backward = "kssim::masked_ssim_backward";
};

// The gradients list of a backward() whose first two inputs are the images: `backward(computed)`
// returns the gradients of img1 and img2 for the `gradients` bits `computed`. That is the forward's
// `gradients` (`hint`) when it covers what is wanted: the same cached workspace, whose partial derivatives
// from that forward are then reused (an extra gradient costs less than running it again).
template <class Backward>
torch::autograd::variable_list image_gradients(torch::autograd::AutogradContext* ctx, std::int64_t hint,
                                               const Backward& backward) {
  const std::int64_t wanted = (ctx->needs_input_grad(0) ? 1 : 0) | (ctx->needs_input_grad(1) ? 2 : 0);
  // One per input of the longest forward() (masked SSIM's 6); autograd drops the undefined ones beyond a
  // function's inputs.
  torch::autograd::variable_list out(6);
  if (wanted == 0) return out;
  auto [grad1, grad2] = backward((hint & wanted) == wanted ? hint : wanted);
  if (wanted & 1) out[0] = grad1;
  if (wanted & 2) out[1] = grad2;
  return out;
}

// The autograd function of a metric's operators (Ops: their names) over two images, and for masked SSIM a
// mask (Mask: one const at::Tensor&; none for the others), which gets no gradient. forward() keeps the
// images (and mask), the options operand as it came (the operators decode it), per_image and the
// `gradients` hint, then runs the forward operator below autograd; backward() runs the backward operator on
// what forward() kept.
template <class Ops, class... Mask>
class MetricFunction : public torch::autograd::Function<MetricFunction<Ops, Mask...>> {
  using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, Mask..., c10::ArrayRef<double>,
                                      std::int64_t, bool);
  using BackwardSignature = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                               const at::Tensor&, Mask..., c10::ArrayRef<double>,
                                                               std::int64_t, bool);

 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& img1, const at::Tensor& img2,
                            Mask... mask, c10::ArrayRef<double> options, std::int64_t gradients, bool per_image) {
    static const auto op =
        c10::Dispatcher::singleton().findSchemaOrThrow(Ops::forward, "").template typed<ForwardSignature>();
    ctx->save_for_backward({img1, img2, mask...});
    ctx->saved_data["options"] = options.vec();
    ctx->saved_data["gradients"] = gradients;
    ctx->saved_data["per_image"] = per_image;
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return op.call(img1, img2, mask..., options, gradients, per_image);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    static const auto op =
        c10::Dispatcher::singleton().findSchemaOrThrow(Ops::backward, "").template typed<BackwardSignature>();
    const auto saved = ctx->get_saved_variables();
    const std::vector<double> options = ctx->saved_data.at("options").toDoubleVector();
    const bool per_image = ctx->saved_data.at("per_image").toBool();
    return image_gradients(ctx, ctx->saved_data.at("gradients").toInt(), [&](std::int64_t computed) {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {  // the mask is saved after the images
        return op.call(grads[0], saved[0], saved[1], saved[2 + I]..., options, computed, per_image);
      }(std::index_sequence_for<Mask...>{});
    });
  }
};

template <class Ops>
at::Tensor metric_autograd(const at::Tensor& img1, const at::Tensor& img2, c10::ArrayRef<double> options,
                           std::int64_t gradients, bool per_image) {
  return MetricFunction<Ops>::apply(img1, img2, options, gradients, per_image);
}

at::Tensor masked_ssim_autograd(const at::Tensor& img1, const at::Tensor& img2, const at::Tensor& mask,
                                c10::ArrayRef<double> options, std::int64_t gradients, bool per_image) {
  return MetricFunction<MaskedSsimOps, const at::Tensor&>::apply(img1, img2, mask, options, gradients, per_image);
}

}  // namespace
}  // namespace kssim::torch_binding

TORCH_LIBRARY_IMPL(kssim, Autograd, m) {
  using namespace kssim::torch_binding;
  m.impl("ssim", &metric_autograd<SsimOps>);
  m.impl("l1_ssim_loss", &metric_autograd<L1SsimLossOps>);
  m.impl("ms_ssim", &metric_autograd<MsSsimOps>);
  m.impl("masked_ssim", &masked_ssim_autograd);
}
