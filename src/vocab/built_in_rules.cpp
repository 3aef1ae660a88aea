#include "vocab/built_in_rules.hpp"

#include <map>

namespace p2pbench {

namespace {

// From kernels/tma_copy.cu: kMbarrierBytes per stage.
constexpr uint64_t kMbarrierBytesPerStage = 8;
// cudaDevAttrMaxSharedMemoryPerBlockOptin of every GPU that has TMA bulk copies (sm_90 and
// later: H100, H200, B200 report 232448 = 227 KiB). The GPU's own figure is checked at run time
// by tma_unsupported_reason; nothing larger can run anywhere.
constexpr uint64_t kLargestSmemPerBlockOptin = 227 * 1024;

}  // namespace

std::optional<std::string> tma_shared_memory_limit(const KernelShape& shape) {
  const uint64_t smem = *shape.smem_bytes, stages = uint64_t(*shape.stages);
  if (smem >= 16 && smem + stages * kMbarrierBytesPerStage <= kLargestSmemPerBlockOptin) return std::nullopt;
  return "with " + std::to_string(stages) + " stages, shared memory per block plus " +
         std::to_string(kMbarrierBytesPerStage) + " bytes of mbarrier per stage must be 16 bytes .. "
         "227 KiB (232448 bytes), the most any GPU with TMA (Hopper, Blackwell) gives one block; "
         "the GPU's own limit is checked at run time";
}

std::optional<std::string> tma_stage_bytes(const KernelShape& shape) {
  const uint64_t smem = *shape.smem_bytes, stages = uint64_t(*shape.stages);
  const uint64_t chunk = smem / stages;
  if (smem % stages != 0 || chunk % 16 != 0 || chunk == 0)
    return "smem_bytes " + std::to_string(smem) + " / stages " + std::to_string(stages) +
           " is not a whole multiple of 16 bytes per stage (bulk copies move 16-byte multiples)";
  return std::nullopt;
}

std::optional<std::string> staged_ring_overlap(const std::vector<Flow>& flows) {
  std::map<int, int> sends, receives;
  for (const Flow& f : flows) {
    if (++sends[f.src_rank] > 1)
      return "rank " + std::to_string(f.src_rank) +
             " sends more than one flow at once: the staged baseline's staging area holds one region per sending rank";
    if (++receives[f.dst_rank] > 1)
      return "rank " + std::to_string(f.dst_rank) +
             " receives more than one flow at once: the staged baseline's staging area holds one region per sending rank";
  }
  return std::nullopt;
}

}  // namespace p2pbench
