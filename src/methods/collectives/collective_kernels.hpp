// The put-built collectives' kernel: one launch per operation, every rank's blocks in step
// through per-block barriers over NVLink (kernels/rank_barrier.cuh; no host between the phases):
// block b of every rank handles the same elements of every chunk.
//
//   reduce_scatter_add      own chunk -> own output; barrier; red.add of each rank's chunk r
//                           into rank r's output; barrier (f32: red.add.v4.f32; bf16:
//                           red.add.noftz.v4.bf16x2, 8 elements a vector)
//   reduce_scatter_two_shot barrier; chunk r -> rank r's staging slot; barrier; own output =
//                           the chunks summed in rank order
//   all_gather              barrier; own input -> every rank's output at this rank's chunk; barrier
//   all_reduce_two_shot     the two-shot reduce-scatter, then the sum -> every rank's output; barrier
//   all_reduce_one_shot     barrier; output = every rank's input summed in rank order (loads
//                           from the peers); barrier
// Block b takes pieces b, b + blocks, ... of every span (piece_elements: its threads' vectors, or
// a TMA stage); the all-gather and the two-shot algorithms also run with TMA puts. The all-gather
// may instead have its blocks claim pieces as they go (Launch::claim_pieces): its only span lies
// between its two barriers, so no block needs the pieces of the same block on another rank.
// The first barrier keeps an operation from writing what a peer still reads of the previous
// one; the last lets a rank use (or reuse) its buffers when its kernel ends.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/collective_data.hpp"
#include "kernels/rank_barrier.hpp"

namespace p2pbench::collectives {

enum class Algorithm { kReduceScatterAdd, kReduceScatterAddBf16, kReduceScatterTwoShot, kAllGather, kAllReduceTwoShot,
                       kAllReduceOneShot };

// The elements the algorithm adds or moves: bf16 for kReduceScatterAddBf16, f32 for the others.
CollectiveElement element_of(Algorithm a);

constexpr int kMaxBlocks = kernels::kMaxBarrierBlocks;
using kernels::BarrierHeader;
using kernels::kBarrierWordsBytes;
using kernels::reset_barriers;

// The all-gather's claims of one rank: the next claim, and the blocks done claiming. The last block
// done zeroes both for the next launch (after this one in stream order); the engine zeroes them
// before a sample too.
struct PieceQueue {
  unsigned long long next = 0;
  uint32_t blocks_done = 0;
};

// One operation on one rank. Rank indices are the case's ranks in order. The buffers are typed
// for f32; a bf16 algorithm reads the same addresses as bf16.
struct Launch {
  Algorithm algorithm = Algorithm::kAllReduceOneShot;
  int ranks = 0;
  int me = 0;
  CollectiveSize size;  // its element must be element_of(algorithm) (launch() checks)
  const float* input[kernels::kMaxCollectiveRanks] = {};  // each rank's input (peer mappings)
  float* output[kernels::kMaxCollectiveRanks] = {};       // each rank's output
  float* staging[kernels::kMaxCollectiveRanks] = {};      // rank r's slot that receives this rank's chunk r
  const float* inbox[kernels::kMaxCollectiveRanks] = {};  // this rank's slot that receives rank r's chunk
  uint32_t* barrier_words[kernels::kMaxCollectiveRanks] = {};
  uint32_t* counts = nullptr;  // this rank's barrier count per block (device memory, kept across launches)
  BarrierHeader* header = nullptr;
  uint64_t timeout_ns = 0;
  const uint64_t* heartbeat = nullptr;  // common/host_heartbeat.hpp; null: raw time
  // 0: LD/ST, every thread a 16-byte vector at a time. Else TMA: two shared-memory stages of this
  // many bytes; thread 0 puts each piece with one bulk load and a bulk store per destination
  // (all-gather: every rank; the two-shot all-reduce's sum: written to a stage by the threads,
  // then stored to every rank), the local sums stay LD/ST.
  uint32_t tma_stage_bytes = 0;
  // The all-gather only. 0: block b takes pieces b, b + blocks, ... Else its blocks claim this many
  // pieces at a time from `queue` (this rank's), so that a block the scheduler placed where it
  // gets less of the links takes fewer pieces instead of holding back the launch (two H200: with
  // fixed pieces, 8 of 32 blocks took 1.7 times as long as the rest).
  uint32_t claim_pieces = 0;
  PieceQueue* queue = nullptr;
};

// smem_bytes: the TMA variants' two stages (0: LD/ST).
std::optional<std::string> unsupported_reason(Algorithm a, int blocks, int threads, int ranks, uint64_t smem_bytes,
                                              int device);
// Before the first TMA launch on `device`: allows the kernels the shared memory they take.
void prepare_tma(uint64_t smem_bytes, int device);
// Launch::tma_stage_bytes for a case's smem_bytes: two stages of whole 16 bytes.
uint32_t tma_stage_bytes(uint64_t smem_bytes);
void launch(const Launch& l, int blocks, int threads, cudaStream_t stream);
// Every rank's operation in one grid of one process (blockIdx.y = rank; every block must be
// resident at once): the kernel tests, also under compute-sanitizer, which runs one process's
// launches one at a time.
void launch_in_one_grid(const std::vector<Launch>& ranks, int blocks, int threads, cudaStream_t stream);

}  // namespace p2pbench::collectives
