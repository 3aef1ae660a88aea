// Device memory a plan needs (docs/groups.md, "Memory per rank"): each rank holds one source
// buffer and D destination slots of the sweep's largest footprint F, so
//     per GPU = F x (1 + D) x ranks on that GPU + 256 MiB of headroom,
// D being the most flows any rank receives at once in the plan (1 for the matrix, N - 1 for
// all_to_one and all_to_all). Peers' buffers are mapped through CUDA IPC, which costs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// Buffer slots start at multiples of this (BufferLayout::for_case rounds every size up to it).
constexpr uint64_t kBufferSlotAlignment = 4096;
// Headroom per GPU: CUDA context, NCCL, staging.
constexpr uint64_t kDeviceHeadroomBytes = 256ull << 20;

// A message size rounded up to whole slots, or nullopt where that does not fit in 64 bits.
std::optional<uint64_t> buffer_slot_stride(uint64_t bytes);

// The most flows any rank receives in one case (at least 1): how many destination slots each
// rank allocates. A flow's slot is its index among the case's flows into its destination rank,
// in flow order (destination_slot).
uint64_t destination_slots(const std::vector<CaseSpec>& cases);
// Which of its destination rank's slots the case's flow `flow_index` writes.
uint64_t destination_slot(const CaseSpec& c, size_t flow_index);

// The signal regions each rank allocates (common/signal_area.hpp): the most flows one rank takes
// part in (sending or receiving) in one case, at least 1.
uint64_t signal_regions(const std::vector<CaseSpec>& cases);
// The region that `rank` (an end of `flow`) uses for it: the flow's index among the case's flows
// with `rank` at either end.
uint64_t signal_region(const CaseSpec& c, const Flow& flow, int rank);

struct DeviceMemoryNeed {
  uint64_t buffer_bytes = 0;         // F: one buffer (the largest footprint, at least 4 MiB)
  uint64_t destination_slots = 1;    // D
  uint64_t per_rank_bytes = 0;       // F x (1 + D)
  uint64_t ranks_on_busiest_gpu = 1; // the most ranks any GPU of the layout holds
  uint64_t per_gpu_bytes = 0;        // on that GPU: per_rank_bytes x its ranks + headroom
};

// The need of `cases` on `layout`. Throws InputError naming `sizes` or `buffer_pool_bytes`
// (with the flag that set it, from `origins`) where the arithmetic does not fit in 64 bits.
DeviceMemoryNeed device_memory_need(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                                    const KeyOrigins& origins = {});
// Two ranks on two GPUs: a source and a destination buffer + headroom per GPU, as before groups
// (a caller with both ranks on one GPU adds the other rank's two buffers).
DeviceMemoryNeed device_memory_need(const Config& config, const std::vector<CaseSpec>& cases,
                                    const KeyOrigins& origins = {});

}  // namespace p2pbench
