// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kssim operators of PyTorch (namespace torch.ops.kssim), on CPU and CUDA tensors. Every metric operator
// takes its options as one operand, `float[] options`: kssim::Options' fields, then the metric's own, in the
// order of the options operand's layout below (SsimField, metric_layouts: its one definition). _option_names
// gives that order to the Python package, which builds the list by those names (kssim/functional.py).
//
//   ssim(img1, img2, float[] options, int gradients, bool per_image) -> Tensor
//       mean SSIM (0-dim), or per image (N) when per_image; in the images' dtype. `gradients` (bit 0: img1,
//       bit 1: img2) says which gradients a backward pass will ask for, so the workspace prepares them.
//       options: window_size, sigma, k1, k2, data_range, padding (kssim::Padding's code: 0 valid, 1 same,
//       2 reflect, 3 replicate), float32_window (1: kssim::Window::Float32, the weights and moments of
//       fused-ssim and pytorch-msssim; 0: Exact).
//   ssim_backward(grad, img1, img2, options, gradients, per_image) -> (Tensor, Tensor)
//       the gradients of <grad, ssim(img1, img2)> with respect to img1 and img2, shaped like them; a
//       gradient not asked for in `gradients` is an empty tensor.
//   l1_ssim_loss(img1, img2, options, gradients, per_image) -> Tensor
//   l1_ssim_loss_backward(grad, img1, img2, options, gradients, per_image) -> (Tensor, Tensor)
//       the fused loss l1_weight * mean|img1 - img2| + (1 - l1_weight) * (1 - SSIM), 0-dim, in the images' dtype
//       (kssim::L1SSIMLoss: the L1 term computed inside the SSIM kernels), and its gradients, as ssim's.
//       options: SSIM's, then l1_weight. per_image must be False.
//   ms_ssim(img1, img2, options, gradients, per_image) -> Tensor
//   ms_ssim_backward(grad, img1, img2, options, gradients, per_image) -> (Tensor, Tensor)
//       MS-SSIM (kssim::MSSSIM), mean or per image, and its gradients. options: SSIM's (kssim::MSSSIM's rules
//       decide which it takes: padding 0 only), then the weights, one per scale: the rest of the list.
//   masked_ssim(img1, img2, mask, options, gradients, per_image) -> Tensor
//   masked_ssim_backward(grad, img1, img2, mask, options, gradients, per_image) -> (Tensor, Tensor)
//       masked SSIM (kssim::MaskedSSIM), mean only (per_image must be False); the mask is (N, 1 or C, [D,] H, W)
//       of the images' dtype and gets no gradient. options: SSIM's (kssim::MaskedSSIM's rules decide which it
//       takes: float32_window 0 only), then normalized (1: MaskMode::Normalized, 0: Weights).
//   _option_names(str metric) -> str[]
//       the names of `metric`'s options ("ssim", "l1_ssim_loss", "ms_ssim" or "masked_ssim"), in its operand's
//       order; the last of ms_ssim's, "weights", stands for the rest of the list.
//   ssimulacra2(reference, distorted) -> Tensor
//       SSIMULACRA2 scores (float64, shape (B,)) of distorted (B, 3, H, W) against reference (1, 3, H, W),
//       float32 sRGB in [0, 1]; no autograd formula (the package calls it on detached tensors). The
//       reference's preparation is cached per device while the same reference tensor, unchanged, comes back.
//
// A malformed options operand (its length, a window_size or padding code that is not a whole number, a flag
// other than 0 or 1) raises ValueError; the values' rules are kssim's (kssim::validate, the C++ objects'
// constructors), raised as ValueError with kssim's message. The autograd formulas of the metrics are
// SsimAutograd.cpp; the Python package (src/python/kssim) registers the operators' fake kernels. Tensors are
// read and written in place, ordered on PyTorch's current CUDA stream (StreamOrder.hpp), without
// synchronisation; CUDA graph capture works once a call of the same problem ran outside the capture.

#include "Bridge.hpp"
#include "StreamOrder.hpp"
#include "WorkspaceCache.hpp"

#include <kssim/L1SSIMLossOptions.hpp>
#include <kssim/MSSSIMOptions.hpp>

#include <ATen/ATen.h>
#include <torch/library.h>

#if defined(KSSIM_TORCH_CUDA)
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace kssim::torch_binding {
namespace {

// The cached SSIMULACRA2 reference of each device (key: device index, -1 the host), released with the
// workspaces. `reference` stamps the tensor it was prepared from: the same live, unchanged tensor skips
// the preparation.
struct Ssimulacra2Entry {
  std::unique_ptr<Ssimulacra2Scorer> scorer;
  void* home_stream = nullptr;
  std::unique_ptr<StreamEvents> events;
  InputStamp reference;
};
std::map<int, Ssimulacra2Entry>& ssimulacra2_cache() {
  static auto* cache = new std::map<int, Ssimulacra2Entry>;  // emptied when Kokkos is finalised
  return *cache;
}

void release_all_workspaces() {
  WorkspaceCache::instance().clear();
  ssimulacra2_cache().clear();
}

std::string describe(const at::Tensor& t) {
  std::string s = std::string(c10::toString(t.scalar_type())) + " tensor of shape [";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "] on " + t.device().str();
}

// The checks of the tensors every entry point makes, with messages that name the argument. The Python
// package checks the same first (its messages reach users of kssim.ssim); these guard direct calls of the
// operators. The options and the images' sizes are kssim's own checks (validate_options, the training
// objects' constructors), raised as ValueError by translate_errors.
void check_images(const at::Tensor& img1, const at::Tensor& img2) {
  TORCH_CHECK_VALUE(img1.defined() && img2.defined(), "kssim: img1 and img2 must be tensors");
  TORCH_CHECK_VALUE(img1.device() == img2.device(), "kssim: img1 and img2 must be on the same device, got ",
                    img1.device(), " and ", img2.device());
  TORCH_CHECK_TYPE(img1.scalar_type() == img2.scalar_type(), "kssim: img1 and img2 must have the same dtype, got ",
                   img1.scalar_type(), " and ", img2.scalar_type());
  TORCH_CHECK_TYPE(img1.scalar_type() == at::kFloat || img1.scalar_type() == at::kDouble ||
                       img1.scalar_type() == at::kHalf || img1.scalar_type() == at::kBFloat16,
                   "kssim: images must be float32, float64, float16 or bfloat16, got ", img1.scalar_type());
  TORCH_CHECK_VALUE(img1.dim() == 4 || img1.dim() == 5,
                    "kssim: images must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got ", describe(img1));
  TORCH_CHECK_VALUE(img1.sizes() == img2.sizes(), "kssim: img1 and img2 must have the same shape, got ",
                    img1.sizes(), " and ", img2.sizes());
  // Larger images than 2^30 elements run in pieces (kssim's Slabs.hpp); each extent must fit an int.
  for (std::int64_t i = 0; i < img1.dim(); ++i)
    TORCH_CHECK_VALUE(img1.size(i) < (std::int64_t(1) << 31), "kssim: every extent must be below 2^31, got ",
                      describe(img1));
  TORCH_CHECK_VALUE(img1.is_cpu() || img1.is_cuda(), "kssim: images must be CPU or CUDA tensors, got ",
                    describe(img1));
}

// This build computes on CUDA tensors: Kokkos has its CUDA backend and PyTorch is a CUDA build.
constexpr bool cuda_build =
#if defined(KSSIM_TORCH_CUDA)
    true;
#else
    false;
#endif

// The CUDA kernels of a build without CUDA: a clear message instead of PyTorch's "could not run".
template <class Signature>
struct WithoutCuda;
template <class Result, class... Args>
struct WithoutCuda<Result(Args...)> {
  static Result run(Args...) {
    TORCH_CHECK(false, "kssim: this kssim was built without CUDA (", kokkos_description(),
                "), so it cannot compute on CUDA tensors: move them to the CPU, or rebuild kssim against a Kokkos "
                "with its CUDA backend and a CUDA PyTorch");
  }
};

// A tensor as kernels read it in place. Size-1 axes get stride 1 (their stride is meaningless); an axis
// broadcast by expand() (stride 0) or any other non-positive stride cannot be a kernel View: such a tensor
// is copied first (`keep` holds the copy alive).
Strided strided(const at::Tensor& t, std::optional<at::Tensor>& keep) {
  const at::Tensor* src = &t;
  for (std::int64_t i = 0; i < t.dim(); ++i)
    if (t.size(i) > 1 && t.stride(i) <= 0) {
      keep = t.contiguous();
      src = &*keep;
      break;
    }
  Strided s;
  s.data = const_cast<void*>(src->const_data_ptr());
  s.rank = int(src->dim());
  for (int i = 0; i < s.rank; ++i) {
    s.extents[i] = src->size(i);
    s.strides[i] = src->size(i) == 1 ? 1 : src->stride(i);
  }
  return s;
}

Strided strided_output(const at::Tensor& t) {
  std::optional<at::Tensor> unused;
  return t.numel() == 0 ? Strided{} : strided(t, unused);  // outputs are fresh, dense tensors: never copied
}

// Lets a later ssim_backward of these inputs reuse the workspace's partial derivatives. Not when an input
// was copied: the workspace's backward() reads the images (and mask) of its last forward(), and the copy is
// gone.
void remember_inputs(CacheEntry& e, const at::Tensor& img1, const at::Tensor& img2, const at::Tensor* mask,
                     bool copied) {
  if (copied) return;
  e.img1 = InputStamp(img1);
  e.img2 = InputStamp(img2);
  e.mask = mask ? InputStamp(*mask) : InputStamp();
}

// Whether the workspace's last forward() read these inputs (for a masked key, this mask too).
bool same_inputs(const CacheEntry& e, const at::Tensor& img1, const at::Tensor& img2, const at::Tensor* mask) {
  return e.img1.matches(img1) && e.img2.matches(img2) && (!mask || e.mask.matches(*mask));
}

// The mask of masked SSIM, checked as the images (the kernels check its extents again).
void check_mask(const at::Tensor& mask, const at::Tensor& img1) {
  TORCH_CHECK_VALUE(mask.defined(), "kssim: mask must be a tensor");
  TORCH_CHECK_VALUE(mask.device() == img1.device(), "kssim: mask must be on the images' device, got ", mask.device(),
                    " and ", img1.device());
  TORCH_CHECK_TYPE(mask.scalar_type() == img1.scalar_type(), "kssim: mask must have the images' dtype ",
                   img1.scalar_type(), ", got ", mask.scalar_type());
  bool ok = mask.dim() == img1.dim() && (mask.size(1) == 1 || mask.size(1) == img1.size(1));
  for (std::int64_t i = 0; ok && i < img1.dim(); ++i) ok = i == 1 || mask.size(i) == img1.size(i);
  TORCH_CHECK_VALUE(ok, "kssim: mask must have the images' shape with 1 or C channels, got ", describe(mask),
                    " for images ", describe(img1));
}

// Places the calls on the images' device and stream; initialises Kokkos on first use.
struct Placement {
#if defined(KSSIM_TORCH_CUDA)
  std::optional<c10::cuda::CUDAGuard> guard;  // also restores the current device Kokkos may change
#endif
  Device device = Device::Host;
  int index = -1;
  void* stream = nullptr;

  explicit Placement(const at::Tensor& img) {
    int kokkos_device = -1;
#if defined(KSSIM_TORCH_CUDA)
    if (img.is_cuda()) {
      guard.emplace(img.device());
      device = Device::Cuda;
      index = img.device().index();
      stream = c10::cuda::getCurrentCUDAStream(index).stream();
      kokkos_device = index;
    } else {
      TORCH_CHECK(c10::cuda::device_count() > 0,
                  "kssim: this kssim was built with CUDA (", kokkos_description(),
                  ") and needs a CUDA device to start Kokkos, but PyTorch sees none");
      kokkos_device = c10::cuda::current_device();
    }
#else
    (void)img;
#endif
    ensure_kokkos(kokkos_device, release_all_workspaces);
  }
};

// The options operand of the metric operators: its layout's one definition. Each metric's list is the SSIM
// options (kssim::Options' fields, in SsimField order), then the metric's own field (MetricLayout::own):
// l1_weight (a number), normalized (0 or 1), or MS-SSIM's weights, one per scale, which are the rest of the
// list. A window size, padding code or flag is a whole number there. _option_names gives these names in this
// order, by which kssim/functional.py builds each call's list.
enum SsimField : std::size_t { WindowSize, Sigma, K1, K2, DataRange, PaddingCode, Float32Window, ssim_field_count };
constexpr std::array<const char*, ssim_field_count> ssim_field_names = {
    "window_size", "sigma", "k1", "k2", "data_range", "padding", "float32_window"};

enum class Own { None, One, Rest };  // the metric's own field: none, one number, or the rest of the list
struct MetricLayout {
  Metric metric;
  const char* name;  // the operator's, and _option_names' argument
  const char* own;   // its own field's name (null for none)
  Own own_kind;
  bool per_image;    // whether its operators take per_image=True
};
// In Metric's order (layout_of indexes it).
constexpr std::array<MetricLayout, 4> metric_layouts = {{
    {Metric::Ssim, "ssim", nullptr, Own::None, true},
    {Metric::L1Loss, "l1_ssim_loss", "l1_weight", Own::One, false},
    {Metric::MsSsim, "ms_ssim", "weights", Own::Rest, true},
    {Metric::Masked, "masked_ssim", "normalized", Own::One, false},
}};
static_assert([] {
  for (std::size_t i = 0; i < metric_layouts.size(); ++i)
    if (metric_layouts[i].metric != Metric(i)) return false;
  return true;
}());
constexpr std::size_t own_field = ssim_field_count;  // the index of a metric's own field

const MetricLayout& layout_of(Metric metric) { return metric_layouts[std::size_t(metric)]; }

// The names of `metric`'s options (torch.ops.kssim._option_names), in its operand's order.
std::vector<std::string> option_names(c10::string_view metric) {
  const MetricLayout* found = nullptr;
  for (const MetricLayout& m : metric_layouts)
    if (metric == m.name) found = &m;
  TORCH_CHECK_VALUE(found, "kssim: no metric '", std::string(metric), "' (ssim, l1_ssim_loss, ms_ssim or masked_ssim)");
  std::vector<std::string> names(ssim_field_names.begin(), ssim_field_names.end());
  if (found->own) names.emplace_back(found->own);
  return names;
}

// The operand's layout in words, for the message of a list of the wrong length.
std::string layout_words(const MetricLayout& m) {
  std::string names;
  for (const char* n : ssim_field_names) names += std::string(names.empty() ? "" : ", ") + n;
  switch (m.own_kind) {
    case Own::None: return std::to_string(ssim_field_count) + " numbers (" + names + ")";
    case Own::One: return std::to_string(ssim_field_count + 1) + " numbers (" + names + ", " + m.own + ")";
    case Own::Rest: break;
  }
  return names + ", then the " + m.own + " (" + std::to_string(ssim_field_count) + " numbers and one per weight)";
}

// A whole number of the operand that fits an int (a window size, a padding code, a flag), else nullopt.
std::optional<int> whole_int(double v) {
  if (!(v >= double(std::numeric_limits<int>::min()) && v <= double(std::numeric_limits<int>::max())) ||
      v != std::trunc(v))  // NaN fails the range
    return std::nullopt;
  return int(v);
}

// A number of the operand as its message shows it: the shortest text that reads back as it (2147483648,
// 3.0000001, 1e+21, nan).
std::string number(double v) {
  std::array<char, 32> text;
  return std::string(text.data(), std::to_chars(text.data(), text.data() + text.size(), v).ptr);
}

bool flag(double v, const char* name) {
  TORCH_CHECK_VALUE(v == 0 || v == 1, "kssim: ", name, " must be 0 or 1, got ", number(v));
  return v == 1;
}

// `options`, the operand of `metric`'s operators, into key's options: the one decoding of every operator's
// operand. Only the layout is checked here (the length, the whole numbers, the flags); the values are
// kssim's to check (validate_options).
void decode_options(Metric metric, c10::ArrayRef<double> options, ProblemKey& key) {
  const MetricLayout& m = layout_of(metric);
  const std::size_t n = options.size();
  const bool length_ok = m.own_kind == Own::None  ? n == ssim_field_count
                         : m.own_kind == Own::One ? n == ssim_field_count + 1
                                                  : n >= ssim_field_count;
  TORCH_CHECK_VALUE(length_ok, "kssim: the options of ", m.name, " are ", layout_words(m), ", got ", n,
                    " numbers");
  const double window = options[WindowSize];
  TORCH_CHECK_VALUE(std::isfinite(window) && window == std::trunc(window), "kssim: ",
                    ssim_field_names[WindowSize], " must be an integer, got ", number(window));
  const std::optional<int> window_size = whole_int(window);
  // Only the narrowing to Options::window_size (an int) is the binding's; kssim::validate checks the value.
  TORCH_CHECK_VALUE(window_size, "kssim: ", ssim_field_names[WindowSize], " ", number(window), " does not fit an int");
  const double padding = options[PaddingCode];
  TORCH_CHECK_VALUE(std::isfinite(padding) && padding == std::trunc(padding), "kssim: ",
                    ssim_field_names[PaddingCode], " must be kssim::Padding's integer code, got ", number(padding));
  key.window_size = *window_size;
  key.sigma = options[Sigma];
  key.k1 = options[K1];
  key.k2 = options[K2];
  key.data_range = options[DataRange];
  // The code as kssim::Padding (0 valid, 1 same, 2 reflect, 3 replicate; functional.py's _PADDINGS):
  // kssim::validate rejects any other value, and a code beyond an int becomes one it rejects.
  key.padding = static_cast<Padding>(whole_int(padding).value_or(-1));
  key.float32_window = flag(options[Float32Window], ssim_field_names[Float32Window]);
  key.metric = metric;
  switch (metric) {
    case Metric::L1Loss: key.l1_weight = options[own_field]; break;
    case Metric::MsSsim: key.ms_weights.assign(options.begin() + own_field, options.end()); break;
    case Metric::Masked: key.normalized = flag(options[own_field], m.own); break;
    case Metric::Ssim: break;
  }
}

// kssim's own rules for the key's options (kssim::validate of the metric's options struct: the one list of
// them, whose std::invalid_argument translate_errors raises as ValueError with kssim's message). Checked
// before the key meets the cache: a NaN option compares equivalent to any other there, so it would find
// another problem's workspace and compute with that one's options.
void validate_options(const ProblemKey& key) {
  switch (key.metric) {
    case Metric::L1Loss: validate(L1SSIMLossOptions{key.options(), key.l1_weight}); break;
    case Metric::MsSsim: {
      MSSSIMOptions o;
      o.ssim = key.options();
      o.weights = key.ms_weights;
      validate(o);
      break;
    }
    default: validate(key.options());
  }
}

// Every metric's operators take per_image; those of a metric without per-image results refuse True.
void check_per_image(Metric metric, bool per_image) {
  TORCH_CHECK_VALUE(!per_image || layout_of(metric).per_image, "kssim: ", layout_of(metric).name,
                    " has no per-image result (per_image must be False)");
}

// The key of a call of `metric`'s operators: the images' problem and placement, the options operand
// (decoded and validated) and the gradients wanted.
ProblemKey make_key(const Placement& p, const at::Tensor& img, Metric metric, c10::ArrayRef<double> options,
                    std::int64_t gradients) {
  TORCH_CHECK_VALUE(gradients >= 0 && gradients <= 3, "kssim: gradients must be 0 to 3 (bit 0: img1, bit 1: img2)");
  ProblemKey key;
  key.device = p.device;
  key.device_index = p.index;
  switch (img.scalar_type()) {
    case at::kFloat: key.dtype = Dtype::Float32; break;
    case at::kHalf: key.dtype = Dtype::Float16; break;
    case at::kBFloat16: key.dtype = Dtype::BFloat16; break;
    default: key.dtype = Dtype::Float64;
  }
  key.rank = int(img.dim());
  for (int i = 0; i < key.rank; ++i) key.extents[i] = img.size(i);
  decode_options(metric, options, key);
  key.grad1 = gradients & 1;
  key.grad2 = gradients & 2;
  validate_options(key);
  return key;
}

// The cache entry of `key` for a call on `p`'s stream. A workspace is made outside CUDA graph captures only
// (it allocates, and its first kernels initialise it); inside one, its kernels join the capture from their
// home stream. The legacy default stream cannot take part in a capture: a workspace made there moves, when a
// capture first calls it, to a stream of kssim's own (forked and joined from then on, eager calls too), whose
// Kokkos instance and events were made at its first call, since a capture allows no allocation. The move
// needs no wait: a capture runs nothing, and each replay is ordered by the stream it is launched on.
CacheEntry& entry_for(WorkspaceCache& cache, const ProblemKey& key, const Placement& p, const at::Tensor& img) {
  const bool capturing = is_capturing(p.stream);
  TORCH_CHECK(!capturing || cache.contains(key),
              "kssim: the first call for these images (", describe(img),
              ") is inside a CUDA graph capture; run it once before capturing, so that its workspace exists");
  CacheEntry& e = cache.entry(key, img.options(), p.stream);
  if (p.device == Device::Cuda && e.home_stream == nullptr) {
    if (!e.capture_home) {  // not capturing: the entry was made by a call outside any capture
      void* side = own_stream(p.index);
      prepare_stream(side);
      if (!e.events) e.events = std::make_unique<StreamEvents>();
      e.capture_home = side;
    }
    if (capturing) {
      e.workspace->move_to_stream(e.capture_home);
      e.home_stream = e.capture_home;
    }
  }
  return e;
}

// The start of every operator's body: the workspace cache, locked for the call, then the call's placement
// and the key of its problem (make_key's arguments after the image).
struct LockedCall {
  WorkspaceCache& cache = WorkspaceCache::instance();
  std::lock_guard<std::mutex> lock{cache.mutex()};
  const Placement place;
  const ProblemKey key;
  template <class... KeyArgs>
  LockedCall(const at::Tensor& img, const KeyArgs&... args) : place(img), key(make_key(place, img, args...)) {}
};

// Runs `body`, turning kssim's std::invalid_argument into ValueError and its other errors into RuntimeError.
template <class Body>
auto translate_errors(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const c10::Error&) {
    throw;
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what());
  }
}

// The forward operators of every metric; `mask` only for masked SSIM.
at::Tensor forward_op(Metric metric, const at::Tensor& img1, const at::Tensor& img2, const at::Tensor* mask,
                      c10::ArrayRef<double> options, std::int64_t gradients, bool per_image) {
  check_images(img1, img2);
  if (mask) check_mask(*mask, img1);
  check_per_image(metric, per_image);
  return translate_errors([&] {
    const LockedCall call(img1, metric, options, gradients);
    CacheEntry& e = entry_for(call.cache, call.key, call.place, img1);
    std::optional<at::Tensor> copy1, copy2, copy_mask;
    const Strided x = strided(img1, copy1), y = strided(img2, copy2);
    const Strided m = mask ? strided(*mask, copy_mask) : Strided{};
    // A fresh tensor of PyTorch's allocator (a CUDA graph's pool under capture) that the workspace writes the
    // result into, in the images' dtype: no conversion operator, and no result aliases the workspace.
    at::Tensor result = per_image ? at::empty({img1.size(0)}, img1.options()) : at::empty({}, img1.options());
    e.img1 = e.img2 = e.mask = InputStamp();  // invalid until forward() has run
    OnHomeStream on_home(e.home_stream, call.place.stream, e.events);
    e.workspace->forward(x, y, m, result.mutable_data_ptr(), per_image);
    on_home.join();
    if (call.key.grad1 || call.key.grad2) remember_inputs(e, img1, img2, mask, copy1 || copy2 || copy_mask);
    return result;
  });
}

// The operators' kernels: every metric's forward and backward (masked SSIM's with its mask).
template <Metric M>
at::Tensor metric_forward(const at::Tensor& img1, const at::Tensor& img2, c10::ArrayRef<double> options,
                          std::int64_t gradients, bool per_image) {
  return forward_op(M, img1, img2, nullptr, options, gradients, per_image);
}

at::Tensor masked_ssim_forward(const at::Tensor& img1, const at::Tensor& img2, const at::Tensor& mask,
                               c10::ArrayRef<double> options, std::int64_t gradients, bool per_image) {
  return forward_op(Metric::Masked, img1, img2, &mask, options, gradients, per_image);
}

// Whether the workspace's kernels can read a one-element gradient where it is: a float32 or float64 dense
// tensor (any strides: its one element is at its data pointer) on the images' device (checked by the
// caller). Other dtypes (float16, bfloat16, integers), zero tensors and views with a lazy negation are
// converted by PyTorch into the workspace's double slot first.
bool readable_in_place(const at::Tensor& grad) {
  return (grad.scalar_type() == at::kFloat || grad.scalar_type() == at::kDouble) && grad.layout() == at::kStrided &&
         grad.has_storage() && !grad._is_zerotensor() && !grad.is_neg() && grad.const_data_ptr() != nullptr;
}

// The backward operators of every metric; `mask` only for masked SSIM.
std::tuple<at::Tensor, at::Tensor> backward_op(Metric metric, const at::Tensor& grad, const at::Tensor& img1,
                                               const at::Tensor& img2, const at::Tensor* mask,
                                               c10::ArrayRef<double> options, std::int64_t gradients,
                                               bool per_image) {
  check_images(img1, img2);
  if (mask) check_mask(*mask, img1);
  check_per_image(metric, per_image);
  TORCH_CHECK_VALUE(grad.device() == img1.device(), "kssim: grad must be on the images' device");
  if (per_image) {
    TORCH_CHECK_VALUE(grad.dim() == 1 && grad.size(0) == img1.size(0),
                      "kssim: grad of a per-image SSIM must have shape [N] = [", img1.size(0), "]");
  } else {
    TORCH_CHECK_VALUE(grad.numel() == 1, "kssim: grad of a mean SSIM must have one element");
  }
  return translate_errors([&] {
    const LockedCall call(img1, metric, options, gradients);
    at::Tensor grad1 = call.key.grad1 ? at::empty_like(img1) : at::empty({0}, img1.options());
    at::Tensor grad2 = call.key.grad2 ? at::empty_like(img2) : at::empty({0}, img2.options());
    if (!call.key.grad1 && !call.key.grad2) return std::make_tuple(grad1, grad2);
    CacheEntry& e = entry_for(call.cache, call.key, call.place, img1);
    std::optional<at::Tensor> copy1, copy2, copy_mask;
    const Strided x = strided(img1, copy1), y = strided(img2, copy2);
    const Strided m = mask ? strided(*mask, copy_mask) : Strided{};
    const void* upstream = nullptr;  // per image: 1, then each image's gradient scaled below
    Dtype upstream_dtype = Dtype::Float64;
    if (!per_image) {
      if (readable_in_place(grad)) {  // the kernels read its one element where it is: no copy
        upstream = grad.const_data_ptr();
        upstream_dtype = grad.scalar_type() == at::kFloat ? Dtype::Float32 : Dtype::Float64;
      } else {  // converted to double in the workspace's slot
        e.upstream.copy_(grad.dim() == 0 ? grad : grad.reshape({}));
        upstream = e.upstream.const_data_ptr<double>();
      }
    }
    OnHomeStream on_home(e.home_stream, call.place.stream, e.events);
    if (!same_inputs(e, img1, img2, mask)) {  // the partials are not of these inputs
      call.cache.count_recomputation();
      e.img1 = e.img2 = e.mask = InputStamp();
      e.workspace->forward(x, y, m, nullptr, false);
      remember_inputs(e, img1, img2, mask, copy1 || copy2 || copy_mask);
    }
    e.workspace->backward(upstream, upstream_dtype, strided_output(grad1), strided_output(grad2));
    on_home.join();
    if (per_image) {
      // Image n's pixels move only its own SSIM: d ssim_n / d img[n] = N * d mean / d img[n].
      std::vector<std::int64_t> shape(img1.dim(), 1);
      shape[0] = img1.size(0);
      const at::Tensor scale = (grad * double(img1.size(0))).reshape(shape);
      if (call.key.grad1) grad1.mul_(scale);
      if (call.key.grad2) grad2.mul_(scale);
    }
    return std::make_tuple(grad1, grad2);
  });
}

template <Metric M>
std::tuple<at::Tensor, at::Tensor> metric_backward(const at::Tensor& grad, const at::Tensor& img1,
                                                   const at::Tensor& img2, c10::ArrayRef<double> options,
                                                   std::int64_t gradients, bool per_image) {
  return backward_op(M, grad, img1, img2, nullptr, options, gradients, per_image);
}

std::tuple<at::Tensor, at::Tensor> masked_ssim_backward(const at::Tensor& grad, const at::Tensor& img1,
                                                        const at::Tensor& img2, const at::Tensor& mask,
                                                        c10::ArrayRef<double> options, std::int64_t gradients,
                                                        bool per_image) {
  return backward_op(Metric::Masked, grad, img1, img2, &mask, options, gradients, per_image);
}

// SSIMULACRA2 of each distorted image against image 0 of `reference`, through the device's cached reference.
at::Tensor ssimulacra2_op(const at::Tensor& reference, const at::Tensor& distorted) {
  TORCH_CHECK_VALUE(reference.defined() && distorted.defined(), "kssim: reference and distorted must be tensors");
  TORCH_CHECK_VALUE(reference.device() == distorted.device(),
                    "kssim: reference and distorted must be on the same device, got ", reference.device(), " and ",
                    distorted.device());
  TORCH_CHECK_TYPE(reference.scalar_type() == at::kFloat && distorted.scalar_type() == at::kFloat,
                   "kssim: ssimulacra2's operator takes float32 tensors (kssim.ssimulacra2 converts others)");
  TORCH_CHECK_VALUE(reference.dim() == 4 && distorted.dim() == 4 && reference.size(0) == 1 &&
                        reference.size(1) == 3 && distorted.size(1) == 3 && reference.size(2) == distorted.size(2) &&
                        reference.size(3) == distorted.size(3),
                    "kssim: ssimulacra2 takes a reference (1, 3, H, W) and distorted images (B, 3, H, W), got ",
                    describe(reference), " and ", describe(distorted));
  TORCH_CHECK_VALUE(reference.is_cpu() || reference.is_cuda(), "kssim: images must be CPU or CUDA tensors, got ",
                    describe(reference));
  return translate_errors([&] {
    auto& cache = WorkspaceCache::instance();
    std::lock_guard<std::mutex> lock(cache.mutex());
    const Placement place(reference);
    at::Tensor scores = at::empty({distorted.size(0)}, distorted.options().dtype(at::kDouble));
    if (distorted.size(0) == 0) return scores;
    TORCH_CHECK(!is_capturing(place.stream), "kssim: ssimulacra2 cannot run inside a CUDA graph capture");
    auto& entries = ssimulacra2_cache();
    auto it = entries.find(place.index);
    if (it == entries.end()) {
      Ssimulacra2Entry fresh;
      fresh.home_stream = place.stream;
      fresh.scorer = make_ssimulacra2(place.device, fresh.home_stream);
      it = entries.emplace(place.index, std::move(fresh)).first;
    }
    Ssimulacra2Entry& e = it->second;
    std::optional<at::Tensor> copy_ref, copy_dist;
    const Strided r = strided(reference, copy_ref), d = strided(distorted, copy_dist);
    OnHomeStream on_home(e.home_stream, place.stream, e.events);
    if (copy_ref || !e.reference.matches(reference)) {
      e.reference = InputStamp();  // invalid until prepared
      e.scorer->set_reference(r);
      if (!copy_ref) e.reference = InputStamp(reference);
    }
    e.scorer->compare(d, scores.mutable_data_ptr<double>());
    on_home.join();
    return scores;
  });
}

// Releases every cached workspace, and finalises Kokkos if kssim initialised it (the package calls this at
// interpreter exit; afterwards the operators raise).
void finalize() {
  auto& cache = WorkspaceCache::instance();
  std::lock_guard<std::mutex> lock(cache.mutex());
  finalize_kokkos();
}

void clear_cache() {
  auto& cache = WorkspaceCache::instance();
  std::lock_guard<std::mutex> lock(cache.mutex());
  cache.clear();
}

// [entries held, workspaces allocated since the start, capacity, backward passes that recomputed the forward]
std::vector<std::int64_t> cache_stats() {
  auto& cache = WorkspaceCache::instance();
  std::lock_guard<std::mutex> lock(cache.mutex());
  return {std::int64_t(cache.size()), std::int64_t(cache.created()), std::int64_t(WorkspaceCache::capacity()),
          std::int64_t(cache.recomputed())};
}

std::string build_info() { return std::string(kokkos_description()) + (cuda_build ? "; cuda" : "; no cuda"); }

}  // namespace
}  // namespace kssim::torch_binding

TORCH_LIBRARY(kssim, m) {
  using namespace kssim::torch_binding;
  m.def("ssim(Tensor img1, Tensor img2, float[] options, int gradients, bool per_image) -> Tensor");
  m.def(
      "ssim_backward(Tensor grad, Tensor img1, Tensor img2, float[] options, int gradients, bool per_image) -> "
      "(Tensor, Tensor)");
  m.def("l1_ssim_loss(Tensor img1, Tensor img2, float[] options, int gradients, bool per_image) -> Tensor");
  m.def(
      "l1_ssim_loss_backward(Tensor grad, Tensor img1, Tensor img2, float[] options, int gradients, bool per_image) "
      "-> (Tensor, Tensor)");
  m.def("ms_ssim(Tensor img1, Tensor img2, float[] options, int gradients, bool per_image) -> Tensor");
  m.def(
      "ms_ssim_backward(Tensor grad, Tensor img1, Tensor img2, float[] options, int gradients, bool per_image) -> "
      "(Tensor, Tensor)");
  m.def(
      "masked_ssim(Tensor img1, Tensor img2, Tensor mask, float[] options, int gradients, bool per_image) -> Tensor");
  m.def(
      "masked_ssim_backward(Tensor grad, Tensor img1, Tensor img2, Tensor mask, float[] options, int gradients, "
      "bool per_image) -> (Tensor, Tensor)");
  m.def("_option_names(str metric) -> str[]", &option_names);
  m.def("ssimulacra2(Tensor reference, Tensor distorted) -> Tensor");
  m.def("_finalize() -> ()", &finalize);
  m.def("_clear_cache() -> ()", &clear_cache);
  m.def("_cache_stats() -> int[]", &cache_stats);
  m.def("_build_info() -> str", &build_info);
}

namespace kssim::torch_binding {
namespace {
// The kernels of every operator, the same functions for CPU and CUDA tensors (Placement tells them apart).
void register_kernels(torch::Library& m) {
  m.impl("ssim", &metric_forward<Metric::Ssim>);
  m.impl("ssim_backward", &metric_backward<Metric::Ssim>);
  m.impl("l1_ssim_loss", &metric_forward<Metric::L1Loss>);
  m.impl("l1_ssim_loss_backward", &metric_backward<Metric::L1Loss>);
  m.impl("ms_ssim", &metric_forward<Metric::MsSsim>);
  m.impl("ms_ssim_backward", &metric_backward<Metric::MsSsim>);
  m.impl("masked_ssim", &masked_ssim_forward);
  m.impl("masked_ssim_backward", &masked_ssim_backward);
  m.impl("ssimulacra2", &ssimulacra2_op);
}
}  // namespace
}  // namespace kssim::torch_binding

TORCH_LIBRARY_IMPL(kssim, CPU, m) { kssim::torch_binding::register_kernels(m); }

TORCH_LIBRARY_IMPL(kssim, CUDA, m) {
  using namespace kssim::torch_binding;
#if defined(KSSIM_TORCH_CUDA)
  register_kernels(m);
#else
  m.impl("ssim", &WithoutCuda<decltype(metric_forward<Metric::Ssim>)>::run);
  m.impl("ssim_backward", &WithoutCuda<decltype(metric_backward<Metric::Ssim>)>::run);
  m.impl("l1_ssim_loss", &WithoutCuda<decltype(metric_forward<Metric::L1Loss>)>::run);
  m.impl("l1_ssim_loss_backward", &WithoutCuda<decltype(metric_backward<Metric::L1Loss>)>::run);
  m.impl("ms_ssim", &WithoutCuda<decltype(metric_forward<Metric::MsSsim>)>::run);
  m.impl("ms_ssim_backward", &WithoutCuda<decltype(metric_backward<Metric::MsSsim>)>::run);
  m.impl("masked_ssim", &WithoutCuda<decltype(masked_ssim_forward)>::run);
  m.impl("masked_ssim_backward", &WithoutCuda<decltype(masked_ssim_backward)>::run);
  m.impl("ssimulacra2", &WithoutCuda<decltype(ssimulacra2_op)>::run);
#endif
}
