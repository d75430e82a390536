// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A workspace's kernels run on the stream it was made on (its home stream); a call from another stream, or
// from a CUDA graph capture on another stream, forks onto the home stream and joins back with two events:
//
//   caller stream:  ...work... ─record fork─┐                        ┌─wait join─ ...next work...
//   home stream:                            └─wait fork─ kernels ─record join─┘
//
// So one workspace serves every stream of its device, each call stays ordered with the caller's stream (no
// synchronisation), and under torch.cuda.graph the kernels join the capture through the fork event, as any
// stream that waits on a capturing stream's event does. Host calls (null streams) do nothing.

#include <memory>

namespace kssim::torch_binding {

// The two events of one workspace, created on its first call from a stream other than its home.
class StreamEvents {
 public:
  StreamEvents();
  ~StreamEvents();
  StreamEvents(const StreamEvents&) = delete;
  StreamEvents& operator=(const StreamEvents&) = delete;
  void* fork = nullptr;  // cudaEvent_t
  void* join = nullptr;
};

// Forks onto `home` when it is not `current` (events created in `events` on first need); join() (or the
// destructor, on the exception path) makes `current` wait for everything queued on `home` meanwhile.
class OnHomeStream {
 public:
  OnHomeStream(void* home, void* current, std::unique_ptr<StreamEvents>& events);
  ~OnHomeStream();
  OnHomeStream(const OnHomeStream&) = delete;
  OnHomeStream& operator=(const OnHomeStream&) = delete;
  void join();

 private:
  void* home_;
  void* current_;
  StreamEvents* events_ = nullptr;  // null: same stream, nothing to do
};

// Whether `stream` (a cudaStream_t; null on the host) is capturing a CUDA graph.
bool is_capturing(void* stream);

// A stream of kssim's own on CUDA device `device` (made on first use, never destroyed): where a workspace made
// on the legacy default stream, which cannot join a CUDA graph capture, moves when a capture first calls it
// (TorchOps.cpp, entry_for).
void* own_stream(int device);

}  // namespace kssim::torch_binding
