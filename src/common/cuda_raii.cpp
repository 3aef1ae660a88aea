#include "common/cuda_raii.hpp"

#include <cstdio>

namespace p2pbench {

void report_teardown_error(cudaError_t err, const char* what) {
  if (err != cudaSuccess && err != cudaErrorCudartUnloading)
    std::fprintf(stderr, "p2pbench: warning: %s failed: %s\n", what, cudaGetErrorString(err));
}

Graph capture_graph(cudaStream_t stream, const std::function<void()>& enqueue, const std::string& what) {
  cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "starting the capture of " + what);
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t broken = nullptr;
    (void)cudaStreamEndCapture(stream, &broken);  // the enqueue's error is the one reported
    if (broken) (void)cudaGraphDestroy(broken);
    throw;
  }
  cudaGraph_t raw = nullptr;
  cuda_check(cudaStreamEndCapture(stream, &raw), "ending the capture of " + what);
  return Graph(raw);
}

GraphExec instantiate(const Graph& graph, const std::string& what) {
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph.get(), 0), "instantiating " + what);
  return GraphExec(exec);
}

DeviceBuffer::DeviceBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, bytes), "allocating " + std::to_string(bytes) + " bytes of device memory for " + what);
  ptr_ = UniqueHandle<void*, DeviceFree>(p);
}

MappedHostBuffer::MappedHostBuffer(size_t bytes, const std::string& what) {
  void* p = nullptr;
  cuda_check(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
             "allocating mapped pinned host memory for " + what);
  ptr_ = UniqueHandle<void*, HostFree>(p);
  cuda_check(cudaHostGetDevicePointer(&device_, p, 0), "mapping pinned host memory for " + what);
}

HostRegistration::HostRegistration(void* host, size_t bytes, const std::string& what) {
  cuda_check(cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable),
             "registering host memory for " + what);
  ptr_ = UniqueHandle<void*, HostUnregister>(host);
  cuda_check(cudaHostGetDevicePointer(&device_, host, 0), "mapping registered host memory for " + what);
}

IpcMapping::IpcMapping(const cudaIpcMemHandle_t& handle, const std::string& what) {
  void* p = nullptr;
  cuda_check(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess), "opening the peer's IPC handle for " + what);
  ptr_ = UniqueHandle<void*, IpcClose>(p);
}

Stream make_stream(const std::string& what, bool highest_priority) {
  int least = 0, greatest = 0;
  if (highest_priority)
    cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "reading the stream priorities for " + what);
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest), "creating a stream for " + what);
  return Stream(s);
}

Event make_event(const std::string& what) {
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreate(&e), "creating an event for " + what);
  return Event(e);
}

Event make_untimed_event(const std::string& what) {
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating " + what);
  return Event(e);
}

}  // namespace p2pbench
