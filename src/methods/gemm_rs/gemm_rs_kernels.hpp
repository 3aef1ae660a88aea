// The GEMM -> reduce-scatter pipeline's kernels: the flag a tile's GEMM publishes, and the
// reduce-scatter of the tiles (one launch per operation on each rank): the rank zeroes its tiles
// of the output; a barrier (kernels/rank_barrier.cuh); then for each tile in order it waits until
// the tile's flag says this operation's GEMM finished it (where it waits at all), and adds the
// tile into its owner's output with 16-byte f32 reductions; a barrier. Block b of every rank
// takes the same pieces of every tile.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels/rank_barrier.hpp"

namespace p2pbench::gemm_rs {

struct TileReduce {
  int ranks = 0;
  int me = 0;
  uint64_t tiles = 0;
  uint64_t tile_elements = 0;
  const float* partial = nullptr;                       // this rank's D: tile t at t x tile_elements
  float* output[kernels::kMaxBarrierRanks] = {};        // each rank's output (same layout as D)
  const uint32_t* ready = nullptr;                      // this rank's tile flags
  bool wait_for_tiles = true;                           // false: reduce what D holds now
  uint32_t* barrier_words[kernels::kMaxBarrierRanks] = {};
  uint32_t* counts = nullptr;                           // per block, kept across launches
  kernels::BarrierHeader* header = nullptr;
  uint64_t timeout_ns = 0;
  const uint64_t* heartbeat = nullptr;
};

// One operation's reduce-scatter on `stream`.
void reduce_tiles(const TileReduce& l, int blocks, int threads, cudaStream_t stream);
// Every rank's operation in one grid of one process (blockIdx.y = rank; every block must be
// resident at once): the kernel tests, also under compute-sanitizer.
void reduce_tiles_in_one_grid(const std::vector<TileReduce>& ranks, int blocks, int threads, cudaStream_t stream);
// Raises *flag by one after the work before it on `stream` (a tile's GEMM), with release
// semantics: the operation's n-th launch of reduce_tiles waits for the value n.
void mark_tile_done(uint32_t* flag, cudaStream_t stream);

}  // namespace p2pbench::gemm_rs
