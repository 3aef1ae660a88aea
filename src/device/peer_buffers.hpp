// Each rank's transfer buffers and its node-local peers', mapped through CUDA IPC. Handles
// cross the communication layer as plain bytes.
//
// Memory per rank: one source buffer of `slot_bytes` and a destination buffer of
// `destination_slots` x `slot_bytes` (a flow writes the slot of its index among the case's flows
// into that rank, so concurrent flows never share bytes), and a signal area of `signal_regions`
// regions (common/signal_area.hpp). Peers' buffers cost no memory here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

class PeerBuffers {
 public:
  // Collective: allocates this rank's buffers on the current device, exchanges IPC handles and
  // opens those of every other rank on the same node, unless `no_peer` already says why not
  // (--no-p2p, no peer access). When any rank cannot open a peer's memory, no rank keeps a
  // mapping and no_path_reason() says why, the same on every rank.
  PeerBuffers(const Communicator& comm, const GroupLayout& layout, size_t slot_bytes, int destination_slots,
              int signal_regions, std::optional<std::string> no_peer = std::nullopt);

  // Collective teardown in a safe order: every rank unmaps its peers' memory, then a barrier,
  // then each frees its own, so no rank frees memory a peer still has mapped.
  void close(const Communicator& comm);

  size_t slot_bytes() const { return slot_bytes_; }
  int destination_slots() const { return slots_; }
  void* local_src() const { return src_.get(); }
  void* local_dst(int slot = 0) const { return static_cast<char*>(dst_.get()) + size_t(slot) * slot_bytes_; }
  // The mapping of `rank`'s buffers (null where there is none; see no_path_reason).
  void* peer_src(int rank) const { return peers_.at(size_t(rank)).src.get(); }
  void* peer_dst(int rank, int slot = 0) const;
  // This rank's signal area, and `rank`'s as mapped here (null where there is none).
  void* local_signal_area() const { return signals_.get(); }
  void* peer_signal_area(int rank) const { return peers_.at(size_t(rank)).signals.get(); }
  // Why this rank cannot reach `rank`'s memory (another node, no peer access), or nullopt.
  std::optional<std::string> no_path_reason(int rank) const;
  // Why no peer mapping exists at all (the P2P and latency methods are then skipped), or nullopt.
  const std::optional<std::string>& no_peer_reason() const { return no_peer_; }

 private:
  struct Peer {
    IpcMapping src, dst, signals;
    std::optional<std::string> no_path;
  };
  void open_peers(const Communicator& comm, const GroupLayout& layout, const std::vector<std::string>& handles);

  size_t slot_bytes_;
  int slots_;
  int rank_;
  DeviceBuffer src_, dst_, signals_;
  std::vector<Peer> peers_;  // by rank (this rank's entry stays empty)
  std::optional<std::string> no_peer_;
};

}  // namespace p2pbench
