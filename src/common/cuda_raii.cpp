#include "common/cuda_raii.hpp"

#include <cstdio>

namespace p2pbench {

void report_teardown_error(cudaError_t err, const char* what) {
  if (err != cudaSuccess && err != cudaErrorCudartUnloading)
    std::fprintf(stderr, "p2pbench: warning: %s failed: %s\n", what, cudaGetErrorString(err));
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

Stream make_stream(const std::string& what) {
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a stream for " + what);
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
