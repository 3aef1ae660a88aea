#include "engines/host_link_engine.hpp"

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/event_wait.hpp"
#include "device/host_memory.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {

namespace {
constexpr size_t kStagingBytes = size_t{64} << 20;  // pageable checks: one chunk at a time
}  // namespace

void HostLinkEnds::copy(const Transfer& t, cudaStream_t stream) const {
  cuda_check(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDefault, stream),
             kind_ == kHostToDevice ? "enqueuing a host-to-device copy" : "enqueuing a device-to-host copy");
}

std::optional<std::string> HostLinkEnds::pageable_refusal(const std::string& user) const {
  if (memory_ != HostMemoryKind::kPageable) return std::nullopt;
  return user + " through a device mapping, which pageable memory has none of";
}

void* HostLinkEngine::staging(size_t bytes) {
  if (staging_.size() < bytes) staging_ = DeviceBuffer(bytes, "the staging buffer of pageable host memory's checks");
  return staging_.get();
}

void HostLinkEngine::write_through_staging(void* region, size_t bytes, cudaStream_t stream,
                                           const std::function<void(void*, size_t, uint64_t)>& make) {
  void* chunk = staging(std::min(bytes, kStagingBytes));
  for (uint64_t at = 0; at < bytes; at += kStagingBytes) {
    const size_t n = std::min<size_t>(kStagingBytes, bytes - at);
    make(chunk, n, at);
    // A copy into pageable memory returns once it is done, waiting inside cudaMemcpyAsync for
    // what the stream ran before it: the kernel that made the chunk is waited for here, with a
    // deadline, so that the copy waits for nothing else.
    wait_for_stream(stream, kLocalWorkWaitS, "a chunk for pageable host memory");
    cuda_check(cudaMemcpyAsync(static_cast<char*>(region) + at, chunk, n, cudaMemcpyDeviceToHost, stream),
               "copying a pattern into pageable host memory");
  }
}

void HostLinkEngine::fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) {
  if (!host_source_pageable()) return TransferEngine::fill_source(region, bytes, seed, stream);
  write_through_staging(region, bytes, stream, [&](void* chunk, size_t n, uint64_t at) {
    kernels::fill_pattern(chunk, n, seed, at, stream);
  });
}

void HostLinkEngine::poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) {
  if (!host_destination_pageable()) return TransferEngine::poison_destination(region, bytes, seed, stream);
  write_through_staging(region, bytes, stream, [&](void* chunk, size_t n, uint64_t at) {
    kernels::fill_poison(chunk, n, seed, at, stream);
  });
}

std::optional<std::string> HostLinkEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                                  cudaStream_t stream) {
  if (!host_destination_pageable()) return TransferEngine::verify(dst, bytes, seed, offset, stream);
  void* chunk = staging(std::min(bytes, kStagingBytes));
  for (uint64_t at = 0; at < bytes; at += kStagingBytes) {
    const size_t n = std::min<size_t>(kStagingBytes, bytes - at);
    cuda_check(cudaMemcpyAsync(chunk, static_cast<const char*>(dst) + at, n, cudaMemcpyHostToDevice, stream),
               "copying pageable host memory back for its check");
    auto bad = run_device_check(
        [&](kernels::PatternCheck* r) { kernels::check_pattern(chunk, n, seed, offset + at, r, stream); }, n, stream);
    if (bad) return "in bytes " + std::to_string(at) + " to " + std::to_string(at + n) + " of the host buffer: " + *bad;
  }
  return std::nullopt;
}

}  // namespace p2pbench
