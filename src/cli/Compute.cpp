// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/Compute.hpp"

#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>
#include <type_traits>

namespace kssim::cli {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

// Kokkos is initialised first and finalised last; `cache` (device Views, the SSIM object) in between.
struct ComputeSession::State {
  Kokkos::ScopeGuard kokkos{Kokkos::InitializationSettings().set_disable_warnings(true)};
  Options options;
  std::shared_ptr<void> cache;  // a Kernels<T, Rank>::Cache for the last A
};

namespace {

template <class T, int Rank>
struct DataType;
template <class T>
struct DataType<T, 4> {
  using type = T****;
};
template <class T>
struct DataType<T, 5> {
  using type = T*****;
};

template <int Rank>
Kokkos::LayoutRight layout_of(const std::vector<int>& e) {
  if constexpr (Rank == 4) return Kokkos::LayoutRight(e[0], e[1], e[2], e[3]);
  else return Kokkos::LayoutRight(e[0], e[1], e[2], e[3], e[4]);
}

std::vector<std::size_t> to_shape(const std::vector<int>& e) { return {e.begin(), e.end()}; }

std::size_t element_count(const std::vector<int>& e) {
  std::size_t n = 1;
  for (int x : e) n *= std::size_t(x);
  return n;
}

// The mask's extents: A's, with its own channel count.
std::vector<int> mask_extents(const ComputeRequest& r) {
  std::vector<int> e = r.extents;
  e[1] = int(r.mask->shape[1]);
  return e;
}

// MS-SSIM with pytorch-msssim's five scales and the command line's SSIM options.
kssim::MSSSIMOptions ms_ssim_options(const Options& opts) {
  kssim::MSSSIMOptions o;
  o.ssim = opts;
  return o;
}

template <class T, int Rank>
struct Kernels {
  using DeviceView = Kokkos::View<typename DataType<T, Rank>::type, Kokkos::LayoutRight, Mem>;
  using HostInput = Kokkos::View<typename DataType<const T, Rank>::type, Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostOutput = Kokkos::View<typename DataType<T, Rank>::type, Kokkos::LayoutRight, Kokkos::HostSpace,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  // What stays on the device between requests that share A: A, B's buffer, the mask, and the training object
  // of the metric (its workspace allocated once).
  struct Cache {
    const io::Array* a;
    std::vector<int> extents;
    DeviceView a_device, b_device, mask_device;
    std::optional<kssim::SSIM<Exec, T, Rank>> ssim;
    std::optional<kssim::MSSSIM<Exec, T, Rank>> ms_ssim;
    std::optional<kssim::MaskedSSIM<Exec, T, Rank>> masked;
  };

  static DeviceView allocate(const char* label, const std::vector<int>& extents) {
    return DeviceView(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), layout_of<Rank>(extents));
  }

  static void upload(const DeviceView& device, const io::Array& array, const std::vector<int>& extents) {
    const auto& values = std::get<std::vector<T>>(array.values);
    Kokkos::deep_copy(device, HostInput(values.data(), layout_of<Rank>(extents)));
  }

  static io::Array download(const DeviceView& device, const std::vector<int>& extents) {
    std::vector<T> values(device.size());
    Kokkos::deep_copy(HostOutput(values.data(), layout_of<Rank>(extents)), device);
    return io::Array(to_shape(extents), std::move(values));
  }

  static Cache& cache_for(ComputeSession::State& s, const ComputeRequest& r, const Exec& exec) {
    auto* c = static_cast<Cache*>(s.cache.get());
    if (c && c->a == r.a && c->extents == r.extents) return *c;
    s.cache.reset();  // free the previous A's device memory first
    std::array<int, Rank> e{};
    std::copy(r.extents.begin(), r.extents.end(), e.begin());
    auto fresh = std::make_shared<Cache>(Cache{r.a, r.extents, allocate("kssim_cli::a", r.extents),
                                               allocate("kssim_cli::b", r.extents), {}, {}, {}, {}});
    if (r.mask) {
      fresh->mask_device = allocate("kssim_cli::mask", mask_extents(r));
      upload(fresh->mask_device, *r.mask, mask_extents(r));
      fresh->masked.emplace(exec, e, r.mask_mode, s.options, Gradients::None);
    } else if (r.metric == Metric::MsSsim) {
      fresh->ms_ssim.emplace(exec, e, ms_ssim_options(s.options), Gradients::None);
    } else {
      fresh->ssim.emplace(exec, e, s.options, Gradients::None);
    }
    upload(fresh->a_device, *r.a, r.extents);
    s.cache = fresh;
    return *fresh;
  }

  static ComputeResult run(ComputeSession::State& s, const ComputeRequest& r) {
    Exec exec;
    ComputeResult out;
    out.backend = backend_name();
    Cache& c = cache_for(s, r, exec);
    const DeviceView& a = c.a_device;
    const DeviceView& b = c.b_device;
    upload(b, *r.b, r.extents);
    const Options& opts = s.options;

    const DeviceView& mask = c.mask_device;
    const kssim::MSSSIMOptions ms_opts = ms_ssim_options(opts);

    // One forward pass gives the mean, and the map when one is wanted (the same kernels either way: the mean
    // does not depend on --map, which cli.e2e.values checks).
    // Where the host can read the device's memory (host backends), the kernel writes the map straight into
    // the host array that is returned: no second 100 MB array and copy for a 4K RGB pair.
    constexpr bool host_reads_device = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
    const std::vector<int> map_ext = map_extents(r.extents, opts);
    DeviceView map;
    std::vector<T> map_host;
    bool map_on_host = false;
    if (c.masked) {
      if (r.want_map) map = allocate("kssim_cli::map", map_ext);
      c.masked->forward(a, b, mask, map);
      out.mean = c.masked->value_on_host();
    } else if (c.ms_ssim) {
      c.ms_ssim->forward(a, b);
      out.mean = c.ms_ssim->value_on_host();
    } else {
      if constexpr (host_reads_device) {
        if (r.want_map) map_host.resize(element_count(map_ext));
        c.ssim->forward(a, b, r.want_map ? HostOutput(map_host.data(), layout_of<Rank>(map_ext)) : HostOutput());
        map_on_host = true;
      } else {
        if (r.want_map) map = allocate("kssim_cli::map", map_ext);
        c.ssim->forward(a, b, map);
      }
      out.mean = c.ssim->value_on_host();
    }

    const bool want_grad = r.want_grad_a || r.want_grad_b;
    DeviceView grad_a, grad_b;  // empty unless wanted
    if (r.want_grad_a) grad_a = allocate("kssim_cli::grad_a", r.extents);
    if (r.want_grad_b) grad_b = allocate("kssim_cli::grad_b", r.extents);
    // The timed unit: forward, plus backward when a gradient is wanted. The reported mean is always the
    // forward's above, so that it does not depend on whether gradients are requested (ssim_grad's own mean
    // can differ from it in the last float32 digits).
    auto once = [&]() -> double {
      if (c.masked)
        return want_grad ? kssim::masked_ssim_grad(exec, a, b, mask, r.mask_mode, grad_a, grad_b, opts)
                         : kssim::masked_ssim(exec, a, b, mask, r.mask_mode, opts);
      if (c.ms_ssim)
        return want_grad ? kssim::ms_ssim_grad(exec, a, b, grad_a, grad_b, ms_opts) : kssim::ms_ssim(exec, a, b, ms_opts);
      return want_grad ? kssim::ssim_grad(exec, a, b, grad_a, grad_b, opts) : kssim::ssim(exec, a, b, opts);
    };
    if (want_grad) once();  // the gradients; also the warm-up of the timed runs

    if (r.want_map)
      out.map = map_on_host ? io::Array(to_shape(map_ext), std::move(map_host)) : download(map, map_ext);
    // The per-image (rank-1 `means`) or per-channel (rank-2) means of the chosen metric, on the host.
    const auto slice_means = [&](const auto& means) {
      constexpr bool per_image = std::remove_cvref_t<decltype(means)>::rank() == 1;
      if (c.masked) {
        if constexpr (per_image) kssim::masked_ssim_per_image(exec, a, b, mask, r.mask_mode, means, opts);
        else kssim::masked_ssim_per_channel(exec, a, b, mask, r.mask_mode, means, opts);
      } else if (c.ms_ssim) {
        if constexpr (per_image) kssim::ms_ssim_per_image(exec, a, b, means, ms_opts);
        else kssim::ms_ssim_per_channel(exec, a, b, means, ms_opts);
      } else {
        if constexpr (per_image) kssim::ssim_per_image(exec, a, b, means, opts);
        else kssim::ssim_per_channel(exec, a, b, means, opts);
      }
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), means);
      return std::vector<double>(host.data(), host.data() + host.size());
    };
    if (r.want_per_image)
      out.per_image = slice_means(Kokkos::View<double*, Mem>("kssim_cli::per_image", r.extents[0]));
    if (r.want_per_channel)
      out.per_channel = slice_means(Kokkos::View<double**, Kokkos::LayoutRight, Mem>(
          "kssim_cli::per_channel", r.extents[0], r.extents[1]));
    if (r.want_grad_a) out.grad_a = download(grad_a, r.extents);
    if (r.want_grad_b) out.grad_b = download(grad_b, r.extents);

    if (r.repeat > 0) {
      std::vector<double> seconds;
      seconds.reserve(std::size_t(r.repeat));
      for (int i = 0; i < r.repeat; ++i) {
        exec.fence("kssim_cli: before a timed run");
        const auto start = std::chrono::steady_clock::now();
        once();
        exec.fence("kssim_cli: after a timed run");
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(seconds.begin(), seconds.end());
      const std::size_t n = seconds.size();
      const double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
      out.timing = Timing{r.repeat, median, seconds.front()};
    }
    return out;
  }
};

template <class T>
ComputeResult run_typed(ComputeSession::State& s, const ComputeRequest& r) {
  if (r.extents.size() == 4) return Kernels<T, 4>::run(s, r);
  if (r.extents.size() == 5) return Kernels<T, 5>::run(s, r);
  throw std::invalid_argument("kssim: images must be rank 4 or 5");
}

}  // namespace

const char* backend_name() { return Exec::name(); }

std::vector<int> map_extents(const std::vector<int>& extents, const Options& options) {
  std::vector<int> m = extents;
  for (std::size_t i = 2; i < m.size(); ++i)
    m[i] = options.padding == Padding::Valid ? extents[i] - options.window_size + 1 : extents[i];
  return m;
}

ComputeSession::ComputeSession(const Options& options) : state_(std::make_unique<State>()) {
  state_->options = options;
}

ComputeSession::~ComputeSession() {
  if (state_) state_->cache.reset();  // device memory before Kokkos::finalize
}

ComputeResult ComputeSession::compute(const ComputeRequest& request) {
  if (!request.a || !request.b || request.a->dtype() != request.b->dtype())
    throw std::invalid_argument("kssim: both inputs must be given and share a dtype");
  if (request.a->dtype() == io::DType::Float32) return run_typed<float>(*state_, request);
  return run_typed<double>(*state_, request);
}

}  // namespace kssim::cli
