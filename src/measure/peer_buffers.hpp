// The two transfer buffers of each rank and the peer's, mapped through CUDA IPC. Handles
// cross the communication layer as plain bytes.
#pragma once

#include <cstddef>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"

namespace p2pbench {

class PeerBuffers {
 public:
  // Collective: allocates `capacity` bytes of source and of destination on the current device,
  // exchanges IPC handles with the other rank and opens the peer's. Throws RuntimeFailure with
  // a clear message when the peer's memory cannot be mapped (no peer access between the GPUs).
  PeerBuffers(const Communicator& comm, size_t capacity);

  // Collective teardown in a safe order: every rank unmaps the peer's memory, then a barrier,
  // then each frees its own, so no rank frees memory its peer still has mapped.
  void close(const Communicator& comm);

  size_t capacity() const { return capacity_; }
  void* local_src() const { return src_.get(); }
  void* local_dst() const { return dst_.get(); }
  void* peer_src() const { return peer_src_.get(); }
  void* peer_dst() const { return peer_dst_.get(); }

 private:
  size_t capacity_;
  DeviceBuffer src_, dst_;
  IpcMapping peer_src_, peer_dst_;
};

}  // namespace p2pbench
