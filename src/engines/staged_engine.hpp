// The `staged` baseline: GPU -> pinned host memory shared by the two ranks -> GPU, with no
// peer-to-peer access at all. What an application gets when P2P is off.
//
// Pipeline (per direction, a ring of `slots` chunks in the staging area): the sender enqueues,
// per chunk, a flag kernel that waits until the chunk's slot is empty, a copy-engine copy
// (cudaMemcpyAsync) of the chunk into the slot, and publishes it with the next flag kernel;
// the receiver mirrors it: wait until the slot is full, copy it out, mark it consumed. Flags,
// sequence numbers, epochs and timeouts: kernels/staging_kernels.hpp. Byte layout and the
// chunk/slot plan: engines/staging_layout.hpp.
//
// Two-sided: in an orientation's case the source rank runs the send chain and the destination
// rank the receive chain; a bidir rank runs both at once. Each chain is split over lanes (see
// staging_layout.hpp), each lane a stream forked from the launch stream and joined back to it
// with events, so a launch stays one unit in stream order and in graph capture. Direction d
// (the ring d) carries rank d's data.
// Both ranks enqueue identical chunk plans in identical order (the runner launches the same
// transfers on both ends), which is what pairs the k-th fill of a slot with its k-th drain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "engines/staging_layout.hpp"
#include "engines/transfer_engine.hpp"
#include "kernels/staging_kernels.hpp"

namespace p2pbench {

// The staging area as one rank maps it.
struct StagingArea {
  void* host = nullptr;    // this process's mapping: the copies' host end
  void* device = nullptr;  // the device-mapped address of the same memory: the flag kernels'
  staging::Layout layout;
};

class StagedEngine final : public TwoSidedEngine {
 public:
  // Longest a flag kernel waits for the peer before the case is declared broken. Transfers
  // start at the gate on both GPUs, so waits are normally a chunk's time; the margin covers
  // ungated calibration and warm-up, where one rank may start a little later.
  static constexpr double kDefaultTimeoutS = 15.0;

  // `epoch`: nonzero, different for each case, the same on both ranks (it tells this case's
  // flags from those an earlier case left behind).
  StagedEngine(const StagingArea& area, uint32_t epoch, double timeout_s = kDefaultTimeoutS);

  void prepare(int device, int rank, const std::vector<Flow>& mine) override;
  void launch(const Transfer& t, cudaStream_t stream) override;
  // A flag wait that timed out (on either rank) fails the sample before the bytes are checked.
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

  // Why this case's pipeline broke (a flag wait timed out on this rank or the peer), or
  // nullopt. Valid once the work of both ranks has finished.
  std::optional<std::string> fault() const;

 private:
  uint64_t* flag(uint32_t direction, uint32_t slot, uint32_t writer_role) const;  // device address
  kernels::StagingFault* fault_record(uint32_t rank, bool device_address) const;
  uint32_t* count(uint32_t direction, uint32_t slot) const;
  // Enqueues one side's chains on its lane streams (each after `fork_`, each joined into `stream`).
  void enqueue_side(uint32_t role, uint32_t direction, const void* src, void* dst, size_t bytes, cudaStream_t stream);

  StagingArea area_;
  uint32_t epoch_;
  uint64_t timeout_ns_;
  int rank_ = -1;
  int send_direction_ = -1;     // the ring this rank fills (its rank), or -1
  int receive_direction_ = -1;  // the ring this rank drains (the peer's rank), or -1
  uint64_t position_[staging::kDirections] = {0, 0};  // next ring position per direction
  // Device memory: this rank's own count per (direction, slot), then the sticky abort word.
  DeviceBuffer state_;
  std::vector<Stream> lanes_[2];  // per role (StagingRole), one stream per lane
  std::vector<Event> joins_[2];
  Event fork_;
};

}  // namespace p2pbench
