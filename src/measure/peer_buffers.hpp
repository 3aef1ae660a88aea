// The two transfer buffers of each rank and the peer's, mapped through CUDA IPC. Handles
// cross the communication layer as plain bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"

namespace p2pbench {

class PeerBuffers {
 public:
  // Collective: allocates `capacity` bytes of source and of destination on the current device,
  // exchanges IPC handles with the other rank and opens the peer's, unless `no_peer` already
  // says why not (no peer access, --no-p2p). When a rank cannot open the peer's memory, no rank
  // keeps a mapping and no_peer_reason() says why, the same on every rank.
  PeerBuffers(const Communicator& comm, size_t capacity, std::optional<std::string> no_peer = std::nullopt);

  // Collective teardown in a safe order: every rank unmaps the peer's memory, then a barrier,
  // then each frees its own, so no rank frees memory its peer still has mapped.
  void close(const Communicator& comm);

  size_t capacity() const { return capacity_; }
  void* local_src() const { return src_.get(); }
  void* local_dst() const { return dst_.get(); }
  void* peer_src() const { return peer_src_.get(); }
  void* peer_dst() const { return peer_dst_.get(); }
  // Why the peer's memory is not mapped (the P2P and latency methods are then skipped), or nullopt.
  const std::optional<std::string>& no_peer_reason() const { return no_peer_; }

 private:
  size_t capacity_;
  DeviceBuffer src_, dst_;
  IpcMapping peer_src_, peer_dst_;
  std::optional<std::string> no_peer_;
};

}  // namespace p2pbench
