#include "cli/Compute.hpp"

#include <kssim/kssim.hpp>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace kssim::cli {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

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

template <class T, int Rank>
struct Kernels {
  using DeviceView = Kokkos::View<typename DataType<T, Rank>::type, Kokkos::LayoutRight, Mem>;
  using HostInput = Kokkos::View<typename DataType<const T, Rank>::type, Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostOutput = Kokkos::View<typename DataType<T, Rank>::type, Kokkos::LayoutRight, Kokkos::HostSpace,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  static DeviceView upload(const char* label, const io::Array& array, const std::vector<int>& extents) {
    const auto& values = std::get<std::vector<T>>(array.values);
    DeviceView device(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), layout_of<Rank>(extents));
    Kokkos::deep_copy(device, HostInput(values.data(), layout_of<Rank>(extents)));
    return device;
  }

  static io::Array download(const DeviceView& device, const std::vector<int>& extents) {
    std::vector<T> values(device.size());
    Kokkos::deep_copy(HostOutput(values.data(), layout_of<Rank>(extents)), device);
    return io::Array(to_shape(extents), std::move(values));
  }

  static ComputeResult run(const ComputeRequest& r) {
    Exec exec;
    ComputeResult out;
    out.backend = backend_name();
    const DeviceView a = upload("kssim_cli::a", *r.a, r.extents);
    const DeviceView b = upload("kssim_cli::b", *r.b, r.extents);
    const bool want_grad = r.want_grad_a || r.want_grad_b;
    DeviceView grad_a, grad_b;  // empty unless wanted
    if (r.want_grad_a)
      grad_a = DeviceView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::grad_a"),
                          layout_of<Rank>(r.extents));
    if (r.want_grad_b)
      grad_b = DeviceView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::grad_b"),
                          layout_of<Rank>(r.extents));

    // The timed unit: forward, plus backward when a gradient is wanted.
    auto once = [&]() -> double {
      return want_grad ? kssim::ssim_grad(exec, a, b, grad_a, grad_b, r.options) : kssim::ssim(exec, a, b, r.options);
    };
    // The reported mean always comes from kssim::ssim, so that it does not depend on whether gradients are
    // requested (ssim_grad's own mean can differ from it in the last float32 digits).
    out.mean = kssim::ssim(exec, a, b, r.options);
    if (want_grad) once();  // the gradients; also the warm-up of the timed runs

    if (r.want_map) {
      const std::vector<int> me = map_extents(r.extents, r.options);
      DeviceView map(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kssim_cli::map"), layout_of<Rank>(me));
      kssim::ssim_map(exec, a, b, map, r.options);
      exec.fence("kssim_cli: map");
      out.map = download(map, me);
    }
    if (r.want_per_image) {
      Kokkos::View<double*, Mem> per_image("kssim_cli::per_image", r.extents[0]);
      kssim::ssim_per_image(exec, a, b, per_image, r.options);
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_image);
      out.per_image.assign(host.data(), host.data() + host.size());
    }
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
ComputeResult run_typed(const ComputeRequest& r) {
  if (r.extents.size() == 4) return Kernels<T, 4>::run(r);
  if (r.extents.size() == 5) return Kernels<T, 5>::run(r);
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

ComputeResult compute(const ComputeRequest& request) {
  if (!request.a || !request.b || request.a->dtype() != request.b->dtype())
    throw std::invalid_argument("kssim: both inputs must be given and share a dtype");
  Kokkos::ScopeGuard kokkos(Kokkos::InitializationSettings().set_disable_warnings(true));
  if (request.a->dtype() == io::DType::Float32) return run_typed<float>(request);
  return run_typed<double>(request);
}

}  // namespace kssim::cli
