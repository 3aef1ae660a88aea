#include "plan/device_memory.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "common/errors.hpp"
#include "common/text_format.hpp"

namespace p2pbench {

namespace {

constexpr uint64_t kMinBufferBytes = 4u << 20;  // latency inboxes and the pointer chain

// The cases and, after each latency case under load, its load's own case (its bytes and flows
// need buffers too).
std::vector<CaseSpec> with_loads(const std::vector<CaseSpec>& cases) {
  std::vector<CaseSpec> out;
  for (const CaseSpec& c : cases) {
    out.push_back(c);
    if (c.load) out.push_back(c.load_case());
  }
  return out;
}

// The largest footprint of any case: its size rounded up to whole slots, or the pool's whole
// slots where a pool is set (as BufferLayout::for_case), at least kMinBufferBytes. A collective
// (an interference case's engine too: CaseSpec::transfer_method) keeps its input and its output
// in the rank's source buffer (engines/collective_engine.hpp): two slots.
uint64_t largest_footprint(const Config& config, const std::vector<CaseSpec>& cases, const KeyOrigins& origins) {
  uint64_t largest = kMinBufferBytes;
  const uint64_t pool = config.buffer_pool_bytes;
  for (const CaseSpec& c : with_loads(cases)) {
    const auto stride = buffer_slot_stride(c.bytes);
    if (!stride)
      throw InputError(key_with_origin(origins, "sizes"), std::to_string(c.bytes),
                       "rounded up to whole " + format_size(kBufferSlotAlignment) + " buffer slots it does not fit in 64 bits");
    uint64_t footprint = pool > *stride ? pool / *stride * *stride : *stride;
    if (is_collective(c.transfer_method()) && __builtin_mul_overflow(*stride, uint64_t{2}, &footprint))
      throw InputError(key_with_origin(origins, "sizes"), std::to_string(c.bytes),
                       "a collective's input and output of that size do not fit in 64 bits");
    largest = std::max(largest, footprint);
  }
  return largest;
}

uint64_t ranks_on_busiest_gpu(const GroupLayout& layout) {
  std::map<std::string, uint64_t> ranks;
  uint64_t most = 1;
  for (const std::string& gpu : layout.gpu_of_rank) most = std::max(most, ++ranks[gpu]);
  return most;
}

}  // namespace

std::optional<uint64_t> buffer_slot_stride(uint64_t bytes) {
  uint64_t padded = 0;
  if (__builtin_add_overflow(bytes, kBufferSlotAlignment - 1, &padded)) return std::nullopt;
  return padded / kBufferSlotAlignment * kBufferSlotAlignment;
}

uint64_t destination_slots(const std::vector<CaseSpec>& cases) {
  uint64_t most = 1;
  for (const CaseSpec& c : with_loads(cases)) {
    std::map<int, uint64_t> into;
    for (const Flow& f : c.flows) most = std::max(most, ++into[f.dst_rank]);
  }
  return most;
}

uint64_t signal_regions(const std::vector<CaseSpec>& cases) {
  uint64_t most = 1;
  for (const CaseSpec& c : with_loads(cases)) {
    std::map<int, uint64_t> involving;
    for (const Flow& f : c.flows) {
      most = std::max(most, ++involving[f.src_rank]);
      if (f.dst_rank != f.src_rank) most = std::max(most, ++involving[f.dst_rank]);
    }
  }
  return most;
}

uint64_t signal_region(const CaseSpec& c, const Flow& flow, int rank) {
  uint64_t index = 0;
  for (const Flow& f : c.flows) {
    if (f == flow) return index;
    if (f.src_rank == rank || f.dst_rank == rank) ++index;
  }
  return index;
}

uint64_t destination_slot(const CaseSpec& c, size_t flow_index) {
  const int dst = c.flows.at(flow_index).dst_rank;
  return uint64_t(std::count_if(c.flows.begin(), c.flows.begin() + std::ptrdiff_t(flow_index),
                                [&](const Flow& f) { return f.dst_rank == dst; }));
}

DeviceMemoryNeed device_memory_need(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                                    const KeyOrigins& origins) {
  DeviceMemoryNeed need;
  need.buffer_bytes = largest_footprint(config, cases, origins);
  need.destination_slots = destination_slots(cases);
  need.ranks_on_busiest_gpu = ranks_on_busiest_gpu(layout);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  uint64_t per_rank = 0, per_gpu = 0;
  // As before groups: four buffers (two ranks on one GPU) and the headroom must fit in 64 bits;
  // then the group's own product.
  const bool fits = need.buffer_bytes <= (max - kDeviceHeadroomBytes) / 4 &&
                    !__builtin_mul_overflow(need.buffer_bytes, 1 + need.destination_slots, &per_rank) &&
                    !__builtin_mul_overflow(per_rank, need.ranks_on_busiest_gpu, &per_gpu) &&
                    !__builtin_add_overflow(per_gpu, kDeviceHeadroomBytes, &per_gpu);
  if (!fits) {
    const bool pool_is_larger = config.buffer_pool_bytes >= need.buffer_bytes;
    throw InputError(key_with_origin(origins, pool_is_larger ? "buffer_pool_bytes" : "sizes"), std::to_string(need.buffer_bytes),
                     "source and destination buffers of this size (" + std::to_string(need.destination_slots) +
                         " destination slots per rank, " + std::to_string(need.ranks_on_busiest_gpu) +
                         " ranks on one GPU) do not fit in 64 bits of device memory");
  }
  need.per_rank_bytes = per_rank;
  need.per_gpu_bytes = per_gpu;
  return need;
}

DeviceMemoryNeed device_memory_need(const Config& config, const std::vector<CaseSpec>& cases, const KeyOrigins& origins) {
  return device_memory_need(config, cases, GroupLayout::distinct(2), origins);
}

}  // namespace p2pbench
