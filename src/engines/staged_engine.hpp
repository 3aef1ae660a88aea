// The `staged` baseline: GPU -> pinned host memory shared by the ranks of a node -> GPU, with
// no peer-to-peer access at all. What an application gets when P2P is off.
//
// Pipeline (per flow, a ring of `slots` chunks in the sender's region of the staging area): the
// sender enqueues, per chunk, a flag kernel that waits until the chunk's slot is empty, a
// copy-engine copy (cudaMemcpyAsync) of the chunk into the slot, and publishes it with the next
// flag kernel; the receiver mirrors it in the same ring: wait until the slot is full, copy it
// out, mark it consumed. Flags, sequence numbers, epochs and timeouts:
// kernels/staging_kernels.hpp. Byte layout and the chunk/slot plan: engines/staging_layout.hpp.
//
// Two-sided: in a flow's case the source rank runs the send chain and the destination rank the
// receive chain. A rank sends at most one flow and receives at most one flow in a case (the plan
// skips other cases; prepare() refuses them), both on its own node. Each chain is split over
// lanes (see staging_layout.hpp), each lane a stream forked from the launch stream and joined
// back to it with events, so a launch stays one unit in stream order and in graph capture.
// launch() enqueues one flow's side; launch_fused() a rank's send and receive sides together,
// forked from one point of the stream, so they run at once.
// Both ends of a flow enqueue identical chunk plans in identical order (the runner launches the
// same transfers on both ends), which is what pairs the k-th fill of a slot with its k-th drain.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "engines/staging_layout.hpp"
#include "engines/transfer_engine.hpp"
#include "kernels/staging_kernels.hpp"

namespace p2pbench {

// The staging area of this rank's node as this rank maps it.
// The streams a rank's staged pipeline runs on: `lanes` per role, with their fork and join
// events. Made once per baseline and lent to every case's engine: streams take the context's
// hardware queues round-robin as they are made, so making them anew each case (while other
// ranks' flag kernels may spin, when ranks share a context) can put two on one queue, where a
// spinning kernel holds back the copy queued behind it.
class StagingStreams {
 public:
  explicit StagingStreams(uint32_t lanes);
  cudaStream_t lane(uint32_t role, uint32_t lane) const { return lanes_[role].at(lane).get(); }
  cudaEvent_t join(uint32_t role, uint32_t lane) const { return joins_[role].at(lane).get(); }
  cudaEvent_t fork(uint32_t role) const { return forks_[role].get(); }

 private:
  std::vector<Stream> lanes_[2];
  std::vector<Event> joins_[2];
  Event forks_[2];
};

struct StagingArea {
  void* host = nullptr;    // this process's mapping: the copies' host end
  void* device = nullptr;  // the device-mapped address of the same memory: the flag kernels'
  staging::Layout layout;  // layout.regions == ranks.size()
  std::vector<int> ranks;  // the node's ranks, ascending: region i is ranks[i]'s ring
  const uint64_t* heartbeat = nullptr;  // this process's (common/host_heartbeat.hpp): flag waits pause with it
  // Device memory for an engine's counters (counter_bytes()), owned by whoever outlives the
  // engines: an engine per case that allocated and freed its own would call cudaFree, which
  // waits for the whole device, spinning flag kernels of ranks sharing the context included.
  // Null: each engine allocates its own (tests of one engine).
  uint32_t* counters = nullptr;
  uint64_t counter_bytes() const { return (2 * uint64_t(layout.geometry.slots) + 1) * sizeof(uint32_t); }
  // The rank's pipeline streams (owned as the counters are); null: each engine makes its own.
  const StagingStreams* streams = nullptr;

  // The region of `rank`, or -1 when it is not on this node.
  int region_of(int rank) const;
};

class StagedEngine final : public TwoSidedEngine {
 public:
  // Longest a flag kernel waits for the peer before the case is declared broken. Transfers
  // start at the gate on both GPUs, so waits are normally a chunk's time; the margin covers
  // ungated calibration and warm-up, where one rank may start a little later.
  static constexpr double kDefaultTimeoutS = 15.0;

  // `epoch`: nonzero, different for each case, the same on every rank (it tells this case's
  // flags from those an earlier case left behind).
  StagedEngine(const StagingArea& area, uint32_t epoch, double timeout_s = kDefaultTimeoutS);

  // `mine`: the flows this rank sends or receives. Throws RuntimeFailure for a rank off the
  // staging area's node, a flow to another node or to itself, or more than one flow sent or
  // received.
  void prepare(int device, int rank, const std::vector<Flow>& mine) override;
  // This rank's side of t.flow.
  void launch(const Transfer& t, cudaStream_t stream) override;
  // This rank's sides of every transfer's flow (at most one send and one receive), concurrently.
  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override;
  // A flag wait that timed out (on any rank of the case) fails the sample before the bytes are
  // checked.
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

  // Why this case's pipeline broke (a flag wait timed out on a rank of the node), or nullopt.
  // Valid once the work of every rank of the case has finished.
  std::optional<std::string> fault() const;
  std::optional<std::string> stalled() override { return fault(); }

 private:
  uint64_t peer_flag_now(const kernels::StagingFault& f) const;
  // One end of one flow as this rank drives it.
  struct Side {
    int ring = -1;      // the region whose slots carry the flow (the sender's), or -1: no such side
    Flow flow{-1, -1};
    uint64_t position = 0;  // next ring position
  };

  uint64_t* flag(uint32_t ring, uint32_t slot, uint32_t writer_role) const;  // device address
  kernels::StagingFault* fault_record(uint32_t region, bool device_address) const;
  uint32_t* count(uint32_t role, uint32_t slot) const;
  void add_flow(const Flow& flow);
  void reset_own_flags();
  // The role this rank plays in t.flow (checked against prepare()).
  uint32_t role_of(const Transfer& t) const;
  // Enqueues one side's chains on its lane streams (each after fork_[role], each joined into
  // `stream`).
  void enqueue_side(uint32_t role, const Transfer& t, cudaStream_t stream);

  StagingArea area_;
  uint32_t epoch_;
  uint64_t timeout_ns_;
  int rank_ = -1;
  int region_ = -1;   // this rank's region: its fault record, its send ring
  Side sides_[2];     // per role (StagingRole)
  // Device memory: this rank's own count per (role, slot), then the sticky abort word.
  DeviceBuffer own_counters_;  // where the area has none
  uint32_t* counters_ = nullptr;
  std::unique_ptr<StagingStreams> own_streams_;  // where the area has none
  const StagingStreams* streams_ = nullptr;
};

}  // namespace p2pbench
