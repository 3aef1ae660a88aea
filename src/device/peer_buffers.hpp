// Each rank's transfer buffers and its node-local peers', mapped through the run's allocator
// (device/peer_memory.hpp: CUDA IPC, VMM with file descriptors, or fabric handles). Handles
// cross the communication layer as plain bytes.
//
// Memory per rank: one source buffer of `slot_bytes` and a destination buffer of
// `destination_slots` x `slot_bytes` (a flow writes the slot of its index among the case's flows
// into that rank, so concurrent flows never share bytes), and a signal area of `signal_regions`
// regions (common/signal_area.hpp). Peers' buffers cost no memory here.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"  // not needed here since the allocators; kept for its includers
#include "device/peer_memory.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

class PeerBuffers {
 public:
  // Collective: allocates this rank's buffers on the current device with `allocator`, exchanges
  // their handles and maps those of every other rank on the same node, unless `no_peer` already
  // says why not (--no-p2p, no peer access, one rank). When any rank cannot allocate exportable
  // memory or map a peer's, no rank keeps a mapping and no_path_reason() says why, the same on
  // every rank (where vmm or fabric could not allocate, the own buffers come from cudaMalloc, so
  // the methods that need no peer still run).
  PeerBuffers(const Communicator& comm, const GroupLayout& layout, size_t slot_bytes, int destination_slots,
              int signal_regions, std::optional<std::string> no_peer = std::nullopt,
              Allocator allocator = Allocator::kLegacy);

  // Collective, at the end of a run that may still write its file: unmaps every peer's memory
  // here, after the work queued on the device, and records how long the unmapping took
  // (mapping_meta()'s unmap_ms). Every rank calls it, with `unmap` false where the run ends
  // without optional work (nothing is unmapped or recorded then); close() unmaps untimed.
  void unmap_peers(const Communicator& comm, bool unmap = true);

  // Collective teardown in a safe order: every rank unmaps its peers' memory, then a barrier,
  // then each frees its own, so no rank frees memory a peer still has mapped.
  void close(const Communicator& comm);

  size_t slot_bytes() const { return slot_bytes_; }
  int destination_slots() const { return slots_; }
  void* local_src() const { return pointer(src_); }
  void* local_dst(int slot = 0) const { return static_cast<char*>(pointer(dst_)) + size_t(slot) * slot_bytes_; }
  // The mapping of `rank`'s buffers (null where there is none; see no_path_reason).
  void* peer_src(int rank) const { return pointer(peers_.at(size_t(rank)).src); }
  void* peer_dst(int rank, int slot = 0) const;
  // This rank's signal area, and `rank`'s as mapped here (null where there is none).
  void* local_signal_area() const { return pointer(signals_); }
  void* peer_signal_area(int rank) const { return pointer(peers_.at(size_t(rank)).signals); }
  // Why this rank cannot reach `rank`'s memory (another node, no peer access), or nullopt.
  std::optional<std::string> no_path_reason(int rank) const;
  // Why no peer mapping exists at all (the P2P and latency methods are then skipped), or nullopt.
  const std::optional<std::string>& no_peer_reason() const { return no_peer_; }
  // The results' meta.peer_mapping, the same on every rank: the allocator, how long mapping took
  // (max over ranks, and each rank's), the granularity, why there is no mapping, and after
  // unmap_peers() how long unmapping took (schema/results.schema.json).
  const nlohmann::json& mapping_meta() const { return mapping_; }

 private:
  struct Peer {
    std::unique_ptr<DeviceMemory> src, dst, signals;
    std::optional<std::string> no_path;
  };
  // Null where there is none (a peer without mapping; this rank's own after close()).
  static void* pointer(const std::unique_ptr<DeviceMemory>& m) { return m ? m->get() : nullptr; }
  std::string allocate_own(int signal_regions, bool exported);
  void zero_signal_area();
  void agree_on_allocation(const Communicator& comm, const std::string& failure, bool exported);
  void open_peers(const Communicator& comm, const GroupLayout& layout, const std::vector<std::string>& handles);
  void record_mapping(const Communicator& comm, double ms);

  size_t slot_bytes_;
  int slots_;
  int rank_;
  Allocator allocator_;
  std::unique_ptr<PeerMemory> memory_;  // null where the allocator is unavailable on this rank
  std::unique_ptr<DeviceMemory> src_, dst_, signals_;
  std::vector<Peer> peers_;  // by rank (this rank's entry stays empty)
  std::optional<std::string> no_peer_;
  std::string own_buffers_ = "cudaMalloc";  // or "cuMemCreate": where this rank's buffers came from
  std::string fallback_;                    // why they came from cudaMalloc under vmm or fabric
  nlohmann::json mapping_;
};

}  // namespace p2pbench
