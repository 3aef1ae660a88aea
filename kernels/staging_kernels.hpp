// Flag kernels of the staged baseline: the per-chunk signals between a sender GPU and a receiver
// GPU that pass data through a ring of slots in pinned host memory both of them map (each
// sending rank of a node has its own ring; in a case it has one receiver).
//
// Protocol, per slot of one ring (two 64-bit flag words in host memory, one writer each):
//   full     - written by the sender:   (epoch << 32) | number of times it filled the slot
//   consumed - written by the receiver: (epoch << 32) | number of times it drained the slot
// The slot is empty when consumed == full, and holds one chunk when full == consumed + 1. The
// sender fills it only when it sees consumed == (epoch, its own fill count); the receiver
// drains it only when it sees full == (epoch, its own drain count + 1). Each side keeps its own
// count in device memory (StagingStep::count) and advances it when it signals, so the counts,
// not the kernel parameters, carry the sequence: a CUDA graph that replays identical
// parameters still walks through increasing sequence numbers.
//
// The epoch (one per case, agreed without talking) makes flags left by an earlier case (one
// that timed out half-way, say) never match: each side resets only the flags it writes, to
// (epoch, 0), and its peer waits until it has done so.
//
// Timeouts: a wait gives up after timeout_ns (counted while the host's heartbeat moves), sets the sticky `abort`
// word (device memory) and writes a StagingFault into host memory. Every later step of that
// rank then returns at once (no wait, no signal), so a broken pipeline costs one timeout,
// not one per chunk, and the host learns why from the fault record.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace p2pbench::kernels {

enum StagingRole : uint32_t { kStagingSender = 0, kStagingReceiver = 1 };

__host__ __device__ inline uint64_t staging_flag(uint32_t epoch, uint32_t count) {
  return (uint64_t(epoch) << 32) | count;
}

// The value of the PEER's flag that lets `role` go on with a slot it has used `own_count`
// times: the sender needs the slot drained as often as it filled it; the receiver needs one
// fill more than it drained.
__host__ __device__ inline uint64_t staging_expected(uint32_t epoch, uint32_t own_count, uint32_t role) {
  return staging_flag(epoch, own_count + (role == kStagingReceiver ? 1u : 0u));
}

// Written (plain stores, read by the host after the work finished) by the wait that timed out.
struct StagingFault {
  uint32_t epoch;      // the case's epoch; 0: no fault
  uint32_t role;       // StagingRole of the waiter
  uint32_t ring;       // the ring (the sending rank's region of the staging area)
  uint32_t slot;
  uint64_t expected;   // the peer flag value waited for
  uint64_t seen;       // the last value read
  uint64_t waited_ns;
  uint32_t from_rank;  // the ring's sending rank
  uint32_t to_rank;    // the ring's receiving rank in this case
};
static_assert(sizeof(StagingFault) == 48, "StagingFault is shared between processes: keep its layout fixed");

// One step of a side's chain: optionally signal the slot just used, then optionally wait until
// the next slot may be used. All pointers: device-accessible addresses.
struct StagingStep {
  // Signal: ++*signal_count, then st.release.sys (epoch, count) into *signal_flag (the flag
  // this side writes). Null: no signal.
  uint64_t* signal_flag = nullptr;
  uint32_t* signal_count = nullptr;
  // Wait: until *wait_flag (the peer's flag of the slot) == staging_expected(epoch,
  // *wait_count, role) (ld.acquire.sys). Null: no wait.
  const uint64_t* wait_flag = nullptr;
  const uint32_t* wait_count = nullptr;
  uint32_t wait_slot = 0;  // for the fault record
  uint32_t ring = 0;       // for the fault record
  uint32_t from_rank = 0;  // for the fault record: the ring's sender and receiver
  uint32_t to_rank = 0;
  uint32_t role = kStagingSender;
  uint32_t epoch = 0;
  uint64_t timeout_ns = 0;
  const uint64_t* heartbeat = nullptr;  // common/host_heartbeat.hpp: a whole-job pause does not count
  uint32_t* abort = nullptr;      // device memory, sticky
  StagingFault* fault = nullptr;  // mapped host memory
};

// One single-thread kernel. Capturable into a CUDA graph.
void enqueue_staging_step(const StagingStep& step, cudaStream_t stream);

}  // namespace p2pbench::kernels
