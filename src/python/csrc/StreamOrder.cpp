// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// StreamOrder.hpp's events, on the CUDA runtime of PyTorch's CUDA builds; nothing to do without CUDA.

#include "StreamOrder.hpp"

#include <c10/util/Exception.h>

#include <map>

#if defined(KSSIM_TORCH_CUDA)
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime_api.h>
#endif

namespace kssim::torch_binding {

#if defined(KSSIM_TORCH_CUDA)
namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

StreamEvents::StreamEvents() {
  cudaEvent_t f = nullptr, j = nullptr;
  C10_CUDA_CHECK(cudaEventCreateWithFlags(&f, cudaEventDisableTiming));
  fork = f;
  C10_CUDA_CHECK(cudaEventCreateWithFlags(&j, cudaEventDisableTiming));
  join = j;
}

StreamEvents::~StreamEvents() {
  if (fork) C10_CUDA_CHECK_WARN(cudaEventDestroy(as_event(fork)));
  if (join) C10_CUDA_CHECK_WARN(cudaEventDestroy(as_event(join)));
}

OnHomeStream::OnHomeStream(void* home, void* current, std::unique_ptr<StreamEvents>& events)
    : home_(home), current_(current) {
  if (home == current) return;
  if (!events) events = std::make_unique<StreamEvents>();
  C10_CUDA_CHECK(cudaEventRecord(as_event(events->fork), as_stream(current)));
  C10_CUDA_CHECK(cudaStreamWaitEvent(as_stream(home), as_event(events->fork), 0));
  events_ = events.get();
}

void OnHomeStream::join() {
  if (!events_) return;
  StreamEvents* e = events_;
  events_ = nullptr;
  C10_CUDA_CHECK(cudaEventRecord(as_event(e->join), as_stream(home_)));
  C10_CUDA_CHECK(cudaStreamWaitEvent(as_stream(current_), as_event(e->join), 0));
}

OnHomeStream::~OnHomeStream() {
  if (!events_) return;
  // The exception path: still leave the caller's stream ordered after whatever was queued on home.
  C10_CUDA_CHECK_WARN(cudaEventRecord(as_event(events_->join), as_stream(home_)));
  C10_CUDA_CHECK_WARN(cudaStreamWaitEvent(as_stream(current_), as_event(events_->join), 0));
}

bool is_capturing(void* stream) {
  if (!stream) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(as_stream(stream), &status));
  return status != cudaStreamCaptureStatusNone;
}

void* own_stream(int device) {
  static std::map<int, cudaStream_t> streams;  // never destroyed: workspaces may outlive any owner (callers hold
                                               // the cache's mutex)
  auto it = streams.find(device);
  if (it == streams.end()) {
    cudaStream_t s = nullptr;
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    it = streams.emplace(device, s).first;
  }
  return it->second;
}
#else
StreamEvents::StreamEvents() = default;
StreamEvents::~StreamEvents() = default;
OnHomeStream::OnHomeStream(void* home, void* current, std::unique_ptr<StreamEvents>&) : home_(home), current_(current) {
  TORCH_INTERNAL_ASSERT(home == current, "kssim: streams without CUDA");
}
void OnHomeStream::join() {}
OnHomeStream::~OnHomeStream() = default;
bool is_capturing(void*) { return false; }
void* own_stream(int) { return nullptr; }
#endif

}  // namespace kssim::torch_binding
