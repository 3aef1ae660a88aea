// RAII owners of CUDA resources. Destructors never throw: a failure there is reported on stderr.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "common/cuda_check.hpp"

namespace p2pbench {

// Moves ownership of a handle; the deleter is a stateless functor.
template <typename Handle, typename Deleter>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle h) : h_(h) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  Handle get() const { return h_; }
  explicit operator bool() const { return h_ != Handle{}; }
  void reset() {
    if (h_ != Handle{}) Deleter{}(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

void report_teardown_error(cudaError_t err, const char* what);

struct DeviceFree {
  void operator()(void* p) const { report_teardown_error(cudaFree(p), "freeing device memory"); }
};
struct HostFree {
  void operator()(void* p) const { report_teardown_error(cudaFreeHost(p), "freeing pinned host memory"); }
};
struct HostUnregister {
  void operator()(void* p) const { report_teardown_error(cudaHostUnregister(p), "unregistering host memory"); }
};
struct IpcClose {
  void operator()(void* p) const { report_teardown_error(cudaIpcCloseMemHandle(p), "closing a peer IPC mapping"); }
};
struct StreamDestroy {
  void operator()(cudaStream_t s) const { report_teardown_error(cudaStreamDestroy(s), "destroying a stream"); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const { report_teardown_error(cudaEventDestroy(e), "destroying an event"); }
};
struct GraphDestroy {
  void operator()(cudaGraph_t g) const { report_teardown_error(cudaGraphDestroy(g), "destroying a graph"); }
};
struct GraphExecDestroy {
  void operator()(cudaGraphExec_t g) const {
    report_teardown_error(cudaGraphExecDestroy(g), "destroying an executable graph");
  }
};

using Stream = UniqueHandle<cudaStream_t, StreamDestroy>;
using Event = UniqueHandle<cudaEvent_t, EventDestroy>;
using Graph = UniqueHandle<cudaGraph_t, GraphDestroy>;
using GraphExec = UniqueHandle<cudaGraphExec_t, GraphExecDestroy>;

// The work `enqueue` queues on `stream`, captured into a graph (thread-local mode, as NCCL asks).
// Where `enqueue` throws, the capture ends and its partial graph goes. `what` names the capture
// in errors.
Graph capture_graph(cudaStream_t stream, const std::function<void()>& enqueue, const std::string& what);
// Instantiates `graph`.
GraphExec instantiate(const Graph& graph, const std::string& what);

// Device memory of the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t bytes, const std::string& what);
  void* get() const { return ptr_.get(); }
  size_t size() const { return bytes_; }

 private:
  UniqueHandle<void*, DeviceFree> ptr_;
  size_t bytes_ = 0;
};

// Pinned host memory mapped into the device's address space (polled by kernels).
class MappedHostBuffer {
 public:
  MappedHostBuffer() = default;
  MappedHostBuffer(size_t bytes, const std::string& what);
  void* host() const { return ptr_.get(); }
  void* device() const { return device_; }

 private:
  UniqueHandle<void*, HostFree> ptr_;
  void* device_ = nullptr;
};

// Existing host memory (e.g. POSIX shared memory) registered and mapped for the device.
class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(void* host, size_t bytes, const std::string& what);
  void* device() const { return device_; }

 private:
  UniqueHandle<void*, HostUnregister> ptr_;
  void* device_ = nullptr;
};

// The peer's allocation, opened from its IPC handle.
class IpcMapping {
 public:
  IpcMapping() = default;
  IpcMapping(const cudaIpcMemHandle_t& handle, const std::string& what);
  void* get() const { return ptr_.get(); }

 private:
  UniqueHandle<void*, IpcClose> ptr_;
};

// A non-blocking stream; `highest_priority`: at the device's highest stream priority.
Stream make_stream(const std::string& what, bool highest_priority = false);
Event make_event(const std::string& what);
// An event that only orders work (fork and join of streams): no timestamps, cheaper to record.
Event make_untimed_event(const std::string& what);

}  // namespace p2pbench
