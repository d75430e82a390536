// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kokkos' lifetime inside a Python process: initialised at the first kssim call unless the program already
// did, finalised at interpreter exit only if kssim initialised it. Everything the binding holds in Kokkos
// memory (the cached workspaces, the stream instances) is released by a finalize hook, whoever finalises.

#include "Bridge.hpp"
#include "KokkosRuntime.hpp"

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kssim::torch_binding {
namespace {

bool kokkos_is_ours = false;
bool hook_pushed = false;
void (*release_workspaces)() = nullptr;

#if defined(KOKKOS_ENABLE_CUDA)
std::map<void*, Kokkos::Cuda>& cuda_instances() {
  static auto* instances = new std::map<void*, Kokkos::Cuda>;  // never destroyed: cleared by the hook
  return *instances;
}
#endif

void release_everything() {
  if (release_workspaces) release_workspaces();
#if defined(KOKKOS_ENABLE_CUDA)
  cuda_instances().clear();
#endif
}

void finalize_at_exit() {
  if (kokkos_is_ours && Kokkos::is_initialized()) Kokkos::finalize();
}

}  // namespace

void ensure_kokkos(int cuda_device, void (*release)()) {
  release_workspaces = release;
  if (!Kokkos::is_initialized()) {
    if (Kokkos::is_finalized())
      throw std::runtime_error(
          "kssim: Kokkos has already been finalized in this process and cannot be initialized again");
    Kokkos::InitializationSettings settings;
    settings.set_disable_warnings(true);  // e.g. OMP_PROC_BIND unset: PyTorch's threads are not Kokkos' to pin
#if defined(KOKKOS_ENABLE_CUDA)
    settings.set_device_id(cuda_device < 0 ? 0 : cuda_device);
#else
    (void)cuda_device;
#endif
    Kokkos::initialize(settings);
    kokkos_is_ours = true;
    std::atexit(finalize_at_exit);  // a fallback: the Python package finalises earlier, at interpreter exit
  }
  if (!hook_pushed) {
    Kokkos::push_finalize_hook(release_everything);
    hook_pushed = true;
  }
}

void finalize_kokkos() {
  if (kokkos_is_ours && Kokkos::is_initialized())
    Kokkos::finalize();  // runs the hook
  else
    release_everything();
}

bool has_cuda() {
#if defined(KOKKOS_ENABLE_CUDA)
  return true;
#else
  return false;
#endif
}

const char* kokkos_description() {
  static const std::string text = [] {
    std::ostringstream s;
    s << "Kokkos " << KOKKOS_VERSION / 10000 << '.' << KOKKOS_VERSION / 100 % 100 << '.' << KOKKOS_VERSION % 100
      << ", host " << Kokkos::DefaultHostExecutionSpace::name();
#if defined(KOKKOS_ENABLE_CUDA)
    s << ", Cuda";
#endif
    return s.str();
  }();
  return text.c_str();
}

#if defined(KOKKOS_ENABLE_CUDA)
Kokkos::Cuda cuda_instance(void* stream) {
  auto& instances = cuda_instances();
  auto it = instances.find(stream);
  if (it == instances.end())
    it = instances.emplace(stream, Kokkos::Cuda(static_cast<cudaStream_t>(stream))).first;  // does not own it
  return it->second;
}
#endif

}  // namespace kssim::torch_binding
