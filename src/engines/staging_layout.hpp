// The staged baseline's arithmetic, free of CUDA and MPI (unit-tested): where the flags, fault
// records and slots lie in the shared staging area, and the steps and copies one transfer
// becomes. The protocol itself is described in kernels/staging_kernels.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace p2pbench::staging {

// 4 MiB chunks through a ring of 4 slots per sending rank: 16 MiB in flight per flow, so the
// sender's copy of chunk i+1 overlaps the receiver's copy of chunk i. Each side drives the
// ring from 2 lanes (streams), slot s on lane s mod 2: a flag kernel between two copies on one
// stream costs ~16 us on H200 (copy -> kernel -> copy), 20% of a 4 MiB chunk at 55 GB/s, and
// while one lane is in that gap the other lane's copy keeps the link busy.
constexpr uint64_t kDefaultChunkBytes = 4ull << 20;
constexpr uint32_t kDefaultSlots = 4;
constexpr uint32_t kDefaultLanes = 2;
constexpr uint64_t kLineBytes = 64;    // every flag and fault record on its own cache line
constexpr uint64_t kPageBytes = 4096;  // slots start on page boundaries

struct Geometry {
  uint64_t chunk_bytes = kDefaultChunkBytes;
  uint32_t slots = kDefaultSlots;
  uint32_t lanes = kDefaultLanes;

  // Throws std::invalid_argument on a geometry the pipeline cannot use.
  void validate() const {
    if (slots == 0) throw std::invalid_argument("the staging ring needs at least one slot");
    if (lanes == 0 || slots % lanes != 0)
      throw std::invalid_argument("the staging ring's " + std::to_string(slots) + " slots do not split evenly over " +
                                  std::to_string(lanes) + " lanes");
    if (chunk_bytes == 0 || chunk_bytes % kPageBytes != 0)
      throw std::invalid_argument("the staging chunk must be a positive multiple of 4096 bytes, not " +
                                  std::to_string(chunk_bytes));
  }
};

// The staging area of one node holds one region per rank of the node: region i is the ring
// through which the node's i-th rank (ascending) sends. A rank sends at most one flow in a case,
// so its ring has one receiver per case, which reads the sender's region.
//
// Byte offsets in the staging area:
//   [flags: region x slot x writer (sender's "full", receiver's "consumed"), 64 B each]
//   [fault records: one per region (its rank's, whatever role it had), 64 B each]
//   (header rounded up to a page)
//   [slots: region x slot, chunk_bytes each]
struct Layout {
  Geometry geometry;
  uint32_t regions = 2;  // the node's rank count

  // Throws std::invalid_argument on a layout the pipeline cannot use.
  void validate() const {
    geometry.validate();
    if (regions == 0) throw std::invalid_argument("the staging area needs at least one region");
  }
  uint64_t flag_offset(uint32_t region, uint32_t slot, uint32_t writer_role) const {
    return ((uint64_t(region) * geometry.slots + slot) * 2 + writer_role) * kLineBytes;
  }
  uint64_t fault_offset(uint32_t region) const {
    return uint64_t(regions) * geometry.slots * 2 * kLineBytes + uint64_t(region) * kLineBytes;
  }
  uint64_t header_bytes() const {
    const uint64_t used = fault_offset(regions);
    return (used + kPageBytes - 1) / kPageBytes * kPageBytes;
  }
  uint64_t slot_offset(uint32_t region, uint32_t slot) const {
    return header_bytes() + (uint64_t(region) * geometry.slots + slot) * geometry.chunk_bytes;
  }
  uint64_t total_bytes() const { return slot_offset(regions, 0); }
};

// One enqueued operation of a side's chain for one transfer.
struct Op {
  enum Kind { kStep, kCopy } kind;
  // kStep: signal `signal_slot` (-1: none), then wait for `wait_slot` (-1: none).
  int signal_slot = -1;
  int wait_slot = -1;
  // kCopy: `bytes` at `offset` of the transfer, through `slot`.
  uint32_t slot = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// The chains of one side (sender: copies are device -> slot; receiver: slot -> device; the
// chains have the same shape), one per lane, for a transfer of `bytes` whose first chunk takes
// ring position `*position` (slot = position mod slots, lane = slot mod lanes, so a slot is
// always driven by the same lane and its fills and drains stay in order). Advances *position
// by the chunk count. Both sides of a ring call this with the same sizes in the same
// order, so their positions agree. Shape of a lane that gets chunks a, b, ..., z:
// step(wait a), copy a, step(signal a, wait b), copy b, ..., copy z, step(signal z).
inline std::vector<std::vector<Op>> plan_transfer(uint64_t bytes, const Geometry& g, uint64_t* position) {
  std::vector<std::vector<Op>> lanes(g.lanes);
  if (bytes == 0) return lanes;
  const uint64_t chunks = (bytes + g.chunk_bytes - 1) / g.chunk_bytes;
  std::vector<int> previous(g.lanes, -1);
  for (uint64_t i = 0; i < chunks; ++i) {
    const auto slot = uint32_t((*position)++ % g.slots);
    const uint32_t lane = slot % g.lanes;
    Op step{Op::kStep};
    step.signal_slot = previous[lane];
    step.wait_slot = int(slot);
    lanes[lane].push_back(step);
    Op copy{Op::kCopy};
    copy.slot = slot;
    copy.offset = i * g.chunk_bytes;
    copy.bytes = std::min<uint64_t>(g.chunk_bytes, bytes - copy.offset);
    lanes[lane].push_back(copy);
    previous[lane] = int(slot);
  }
  for (uint32_t lane = 0; lane < g.lanes; ++lane) {
    if (previous[lane] < 0) continue;
    Op last{Op::kStep};
    last.signal_slot = previous[lane];
    lanes[lane].push_back(last);
  }
  return lanes;
}

}  // namespace p2pbench::staging
