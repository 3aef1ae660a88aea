// Per-block barriers between the ranks of one kernel launch each (the collectives built from
// puts, the GEMM -> reduce-scatter pipeline): what the host sets up and reads back. The device
// side is kernels/rank_barrier.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace p2pbench::kernels {

constexpr int kMaxBarrierRanks = 8;
constexpr int kMaxBarrierBlocks = 1024;
// A rank's barrier words, at the start of its signal area: [block][rank] u32.
constexpr size_t kBarrierWordsBytes = size_t(kMaxBarrierBlocks) * kMaxBarrierRanks * sizeof(uint32_t);

// Where a wait of this rank gave up (timed_out != 0), read after the launch.
struct BarrierHeader {
  uint32_t timed_out = 0;
  uint32_t block = 0;
  uint32_t peer = 0;   // the rank index waited for, or kNoPeer
  uint32_t count = 0;  // the count it waited for
};
// BarrierHeader::peer of a wait for a word of the rank's own (the pipeline's tile flags).
constexpr uint32_t kNoPeer = ~0u;

// Zeroes this rank's barrier words, its per-block counts (kMaxBarrierBlocks words) and its header
// (before a sample, while nothing runs).
void reset_barriers(uint32_t* words, uint32_t* counts, BarrierHeader* header, cudaStream_t stream);

}  // namespace p2pbench::kernels
