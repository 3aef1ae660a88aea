// Copies of a few words between device memory and the host that end: a result's header, sampled
// elements, a small table to upload. A synchronous cudaMemcpy waits without a deadline, so a GPU
// whose copy engine stopped (or a queue a spinning kernel holds) would leave only the watchdog to
// end the process; here the copy runs on a stream of its own, through pinned staging, and the host
// waits for it with kLocalWorkWaitS (common/event_wait.hpp), then throws naming the copy.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "common/cuda_raii.hpp"

namespace p2pbench {

// The stream and the staging are made at the first copy, on the device current then; the copy
// follows no other stream's work, so the caller waits for the work that writes `src` first.
class BoundedCopier {
 public:
  void to_host(void* dst, const void* src, size_t bytes, const std::string& what);
  void to_device(void* dst, const void* src, size_t bytes, const std::string& what);

  template <class T>
  T read(const T* src, const std::string& what) {
    T value{};
    to_host(&value, src, sizeof value, what);
    return value;
  }

 private:
  // Pinned staging of at least `bytes` and the stream, made on first use.
  void* staging(size_t bytes, const std::string& what);

  Stream stream_;
  MappedHostBuffer staging_;
  size_t staging_bytes_ = 0;
};

}  // namespace p2pbench
