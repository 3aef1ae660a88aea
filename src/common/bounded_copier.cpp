#include "common/bounded_copier.hpp"

#include <cstring>

#include "common/event_wait.hpp"

namespace p2pbench {

void* BoundedCopier::staging(size_t bytes, const std::string& what) {
  if (!stream_) stream_ = make_stream("copies of " + what);
  if (bytes > staging_bytes_) {
    staging_ = MappedHostBuffer(bytes, "the staging of " + what);
    staging_bytes_ = bytes;
  }
  return staging_.host();
}

void BoundedCopier::to_host(void* dst, const void* src, size_t bytes, const std::string& what) {
  if (bytes == 0) return;
  void* pinned = staging(bytes, what);
  cuda_check(cudaMemcpyAsync(pinned, src, bytes, cudaMemcpyDeviceToHost, stream_.get()), "reading " + what);
  wait_for_stream(stream_.get(), kLocalWorkWaitS, "the reading of " + what);
  std::memcpy(dst, pinned, bytes);
}

void BoundedCopier::to_device(void* dst, const void* src, size_t bytes, const std::string& what) {
  if (bytes == 0) return;
  void* pinned = staging(bytes, what);
  std::memcpy(pinned, src, bytes);
  cuda_check(cudaMemcpyAsync(dst, pinned, bytes, cudaMemcpyHostToDevice, stream_.get()), "copying " + what);
  wait_for_stream(stream_.get(), kLocalWorkWaitS, "the copying of " + what);
}

}  // namespace p2pbench
