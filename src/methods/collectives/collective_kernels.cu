#include "methods/collectives/collective_kernels.hpp"

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/bf16_vectors.cuh"
#include "kernels/copy_device.cuh"
#include "kernels/device_caps.hpp"
#include "kernels/f32_vectors.cuh"
#include "kernels/ptx.cuh"
#include "kernels/rank_barrier.cuh"

namespace p2pbench::collectives {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kVector = kernels::kF32Vector;  // f32 per 16-byte access
constexpr int kRanks = kernels::kMaxCollectiveRanks;

__device__ __forceinline__ bool barrier(const Launch& l, uint32_t count) { return kernels::rank_barrier(l, count); }

// Elements of the piece a block takes at a time: its threads' 16-byte vectors of kWidth elements
// (LD/ST), or one shared-memory stage (TMA, f32 only).
template <int kWidth = kVector>
__device__ __forceinline__ uint64_t piece_elements(const Launch& l) {
  return l.tma_stage_bytes ? l.tma_stage_bytes / 4 : uint64_t(blockDim.x) * kWidth;
}

// How a span's pieces go to the blocks. Fixed: piece j to block j % gridDim.x, the same on every
// rank (what a phase that reads its peers' pieces of the phase before needs). Claimed: each block
// takes claim_pieces pieces at a time from its rank's queue, so that a block placed where it gets
// less of the links takes fewer pieces instead of holding back the launch (the all-gather only).
enum class Pieces { kFixed, kClaimed };

// The rank's next claim: pieces [c * claim_pieces, (c + 1) * claim_pieces) for the claim c returned.
__device__ __forceinline__ uint64_t claim(const Launch& l) { return atomicAdd(&l.queue->next, 1ull); }

// f(p, n) for each of the block's pieces [p, p + n) of a span of `whole` elements, on every thread
// of the block, or on thread 0 alone where `thread0_alone` (it issues the TMA copies, a piece a
// stage). The block's threads get a claim's pieces as one run (their loop over a piece takes any
// length; one loop a claim keeps the stores' loop as tight as the fixed pieces'). A claim is made
// while the one before is worked on: by thread 0 for the block through shared memory, or by
// thread 0 alone for itself.
template <int kWidth, class F>
__device__ void for_each_piece(const Launch& l, uint64_t whole, Pieces pieces, bool thread0_alone, F f) {
  if (thread0_alone && threadIdx.x != 0) return;
  const uint64_t piece = piece_elements<kWidth>(l);
  if (pieces == Pieces::kFixed) {
    for (uint64_t p = blockIdx.x * piece; p < whole; p += gridDim.x * piece) f(p, min(piece, whole - p));
    return;
  }
  const uint64_t grain = l.claim_pieces * piece;
  if (thread0_alone) {
    for (uint64_t c = claim(l), next; c * grain < whole; c = next) {
      next = claim(l);
      for (uint64_t p = c * grain; p < min((c + 1) * grain, whole); p += piece) f(p, min(piece, whole - p));
    }
    return;
  }
  __shared__ unsigned long long claimed[2];
  if (threadIdx.x == 0) claimed[0] = claim(l);
  __syncthreads();
  for (int i = 0; claimed[i] * grain < whole; i ^= 1) {
    if (threadIdx.x == 0) claimed[i ^ 1] = claim(l);
    const uint64_t first = claimed[i] * grain;
    f(first, min(grain, whole - first));
    __syncthreads();  // every thread has read claimed[i] before thread 0 claims into it again
  }
}

// f(k) at each of the thread's 16-byte vectors k (kWidth elements) of the piece [p, p + n).
template <int kWidth, class F>
__device__ __forceinline__ void for_each_vector_of_piece(uint64_t p, uint64_t n, F f) {
  for (uint64_t k = p + threadIdx.x * kWidth; k < p + n; k += uint64_t(blockDim.x) * kWidth) f(k);
}

// f(k) at each 16-byte vector k (kWidth elements) of the block's fixed pieces of
// [first, first + whole) (first and whole multiples of kWidth).
template <int kWidth, class F>
__device__ void for_each_whole_vector(const Launch& l, uint64_t first, uint64_t whole, F f) {
  for_each_piece<kWidth>(l, whole, Pieces::kFixed, false,
                         [&](uint64_t p, uint64_t n) { for_each_vector_of_piece<kWidth>(first + p, n, f); });
}

// The f32 elements of [first, end) in whole 16-byte vectors (first is a multiple of 4).
__device__ __forceinline__ uint64_t whole_of(uint64_t first, uint64_t end) { return (end - first) / kVector * kVector; }

// f(k, n) once, by block 0's thread 0, for the tail of fewer than 4 f32 past [first, end)'s whole
// vectors (none: no call).
template <class F>
__device__ __forceinline__ void for_tail(uint64_t first, uint64_t end, F f) {
  const uint64_t whole = whole_of(first, end);
  if (whole < end - first && blockIdx.x == 0 && threadIdx.x == 0) f(first + whole, int(end - first - whole));
}

// f(k, n) for the block's share of f32 elements [first, end): n = 4 at each 16-byte vector k of
// its pieces (first is a multiple of 4), and the tail.
template <class F>
__device__ void for_each_vector(const Launch& l, uint64_t first, uint64_t end, F f) {
  for_each_whole_vector<kVector>(l, first, whole_of(first, end), [&](uint64_t k) { f(k, kVector); });
  for_tail(first, end, f);
}

using Values = kernels::F32x4;
__device__ __forceinline__ Values load(const float* p, int n) { return kernels::load_f32(p, n); }
__device__ __forceinline__ void store(float* p, const Values& x, int n) { kernels::store_f32(p, x, n); }
__device__ __forceinline__ void accumulate(Values& sum, const Values& x) { kernels::accumulate_f32(sum, x); }

// Rank r's chunk of the vector, [first_of(r), end_of(r)) (CollectiveSize::first / end, in device code).
__device__ __forceinline__ uint64_t first_of(const Launch& l, int r) {
  return min(l.size.elements, uint64_t(r) * l.size.chunk_elements);
}
__device__ __forceinline__ uint64_t end_of(const Launch& l, int r) {
  return min(l.size.elements, uint64_t(r + 1) * l.size.chunk_elements);
}

// The peers in an order that starts after this rank, so that the ranks do not all write rank 0 first.
__device__ __forceinline__ int peer_at(const Launch& l, int j) { return (l.me + j) % l.ranks; }

// Thread 0's TMA copies through two shared-memory stages, each with its mbarrier (the dynamic
// shared memory: the stages, then the barriers).
struct TmaStages {
  uint32_t smem = 0, bars = 0, bytes = 0;  // shared::cta addresses of stage 0 and barrier 0; bytes a stage (0: LD/ST)
  uint32_t parities = 0;                   // thread 0's: bit s, the parity the next wait on stage s expects
  uint32_t next = 0;                       // thread 0's: the stage its next bulk load uses
};

extern __shared__ __align__(128) unsigned char dynamic_smem[];

__device__ TmaStages tma_stages(const Launch& l) {
  TmaStages s;
  s.bytes = l.tma_stage_bytes;
  if (!s.bytes) return s;
  s.smem = uint32_t(__cvta_generic_to_shared(dynamic_smem));
  s.bars = s.smem + 2 * s.bytes;
  if (threadIdx.x == 0) {
    for (uint32_t st = 0; st < 2; ++st) ptx::mbarrier_init(s.bars + 8 * st, 1);
    ptx::fence_mbarrier_init();
    ptx::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  return s;
}

// Thread 0: [src, src + bytes) into the next stage by one bulk load, then a bulk store of the
// stage to dst_of(d) for each of `destinations`. A stage is reused two pieces later, once the
// stores that read it are done reading (wait_group.read 1).
template <class Dst>
__device__ void tma_fan_out(TmaStages& s, const float* src, uint32_t bytes, int destinations, Dst dst_of) {
  const uint32_t st = s.next;
  s.next ^= 1;
  ptx::bulk_wait_group_read<1>();
  ptx::mbarrier_arrive_expect_tx(s.bars + 8 * st, bytes);
  ptx::bulk_load_global_to_shared(s.smem + st * s.bytes, src, bytes, s.bars + 8 * st);
  while (!ptx::mbarrier_try_wait_parity(s.bars + 8 * st, (s.parities >> st) & 1)) {
  }
  s.parities ^= 1u << st;
  for (int d = 0; d < destinations; ++d) ptx::bulk_store_shared_to_global(dst_of(d), s.smem + st * s.bytes, bytes);
  ptx::bulk_commit_group();
}

// Thread 0 waits until its bulk stores are written, before a barrier's release publishes them.
__device__ __forceinline__ void tma_drain(const TmaStages& s) {
  if (threadIdx.x != 0 || !s.bytes) return;
  ptx::bulk_wait_group<0>();
  __threadfence_system();
}

// src's elements [first, end) of the block's pieces to dst_of(d, k) + ... for each of
// `destinations` (k: the element's index in src): TMA where the launch has stages, else LD/ST;
// a tail of fewer than 4 elements by LD/ST.
template <class Dst>
__device__ void put_span(const Launch& l, TmaStages& s, Pieces pieces, const float* src, uint64_t first, uint64_t end,
                         int destinations, Dst dst_of) {
  for_each_piece<kVector>(l, whole_of(first, end), pieces, s.bytes != 0, [&](uint64_t p, uint64_t n) {
    const uint64_t at = first + p;
    if (s.bytes) {
      tma_fan_out(s, src + at, uint32_t(n * 4), destinations, [&](int d) { return dst_of(d, at); });
      return;
    }
    for_each_vector_of_piece<kVector>(at, n, [&](uint64_t k) {
      const Values x = load(src + k, kVector);
      for (int d = 0; d < destinations; ++d) store(dst_of(d, k), x, kVector);
    });
  });
  for_tail(first, end, [&](uint64_t k, int n) {
    for (int d = 0; d < destinations; ++d) store(dst_of(d, k), load(src + k, n), n);
  });
  tma_drain(s);
}

// Thread 0, once its block claims no more: the rank's last block out zeroes the queue.
__device__ void leave_queue(const Launch& l) {
  __threadfence();
  if (atomicAdd(&l.queue->blocks_done, 1u) != gridDim.x - 1) return;
  l.queue->next = 0;
  l.queue->blocks_done = 0;
}

// Each peer's chunk of this rank's input into the peer's staging slot.
__device__ void put_chunks_to_staging(const Launch& l, TmaStages& s) {
  for (int j = 1; j < l.ranks; ++j) {
    const int r = peer_at(l, j);
    const uint64_t first = first_of(l, r);
    put_span(l, s, Pieces::kFixed, l.input[l.me], first, end_of(l, r), 1,
             [&](int, uint64_t k) { return l.staging[r] + (k - first); });
  }
}

// This rank's chunk: its own input and the staged chunks of the peers, summed in rank order.
__device__ __forceinline__ Values staged_sum(const Launch& l, uint64_t k, int n) {
  const uint64_t first = first_of(l, l.me);
  Values sum = {};
  for (int r = 0; r < l.ranks; ++r)
    accumulate(sum, r == l.me ? load(l.input[l.me] + k, n) : load(l.inbox[r] + (k - first), n));
  return sum;
}

// The two-shot all-reduce's second phase with TMA: the block's threads sum a piece of this
// rank's chunk into a stage, thread 0 stores the stage to every rank's output.
__device__ void fan_out_sums(const Launch& l, TmaStages& s) {
  const uint64_t first = first_of(l, l.me), end = end_of(l, l.me);
  uint32_t st = 1;  // put_span drained every earlier bulk copy: the stages start free
  for_each_piece<kVector>(l, whole_of(first, end), Pieces::kFixed, false, [&](uint64_t p, uint64_t n) {
    st ^= 1;
    if (threadIdx.x == 0) ptx::bulk_wait_group_read<1>();  // the stores that last read stage st
    __syncthreads();
    const uint32_t stage = s.smem + st * s.bytes;
    for_each_vector_of_piece<kVector>(0, n, [&](uint64_t k) {
      ptx::st_shared_v4(stage + uint32_t(k) * 4, kernels::bits_of(staged_sum(l, first + p + k, kVector)));
    });
    ptx::fence_proxy_async_shared_cta();  // the generic stores before the bulk stores read them
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int j = 0; j < l.ranks; ++j)
        ptx::bulk_store_shared_to_global(l.output[peer_at(l, j)] + first + p, stage, uint32_t(n * 4));
      ptx::bulk_commit_group();
    }
  });
  for_tail(first, end, [&](uint64_t k, int n) {
    const Values sum = staged_sum(l, k, n);
    for (int j = 0; j < l.ranks; ++j) store(l.output[peer_at(l, j)] + k, sum, n);
  });
  tma_drain(s);
}

// The element types of the reduce-scatter by atomic adds: a 16-byte vector of kWidth elements,
// loaded, stored, and added into a peer's memory by one system-scope reduction.
struct F32Elements {
  using T = float;
  static constexpr int kWidth = kVector;
  __device__ static Values load(const T* p) { return kernels::load_f32(p, kWidth); }
  __device__ static void store(T* p, const Values& x) { kernels::store_f32(p, x, kWidth); }
  __device__ static void add_into(T* p, const Values& x) { kernels::add_f32_into(p, x, kWidth); }
};

struct Bf16Elements {
  using T = __nv_bfloat16;
  static constexpr int kWidth = kernels::kBf16Vector;
  __device__ static kernels::Bf16x8 load(const T* p) { return kernels::load_bf16x8(p); }
  __device__ static void store(T* p, const kernels::Bf16x8& x) { kernels::store_bf16x8(p, x); }
  __device__ static void add_into(T* p, const kernels::Bf16x8& x) { kernels::add_bf16x8_into(p, x); }
};

// A reduce-scatter's chunks are whole vectors (collective_size; launch() checks): no tail.
template <class E>
__device__ bool reduce_scatter_add(const Launch& l, uint32_t& count) {
  using T = typename E::T;
  const T* in = reinterpret_cast<const T*>(l.input[l.me]);
  const auto output = [&](int r) { return reinterpret_cast<T*>(l.output[r]); };
  const uint64_t own = first_of(l, l.me);
  for_each_whole_vector<E::kWidth>(l, own, end_of(l, l.me) - own,
                                   [&](uint64_t k) { E::store(output(l.me) + (k - own), E::load(in + k)); });
  if (!barrier(l, ++count)) return false;
  for (int j = 1; j < l.ranks; ++j) {
    const int r = peer_at(l, j);
    const uint64_t first = first_of(l, r);
    for_each_whole_vector<E::kWidth>(l, first, end_of(l, r) - first,
                                     [&](uint64_t k) { E::add_into(output(r) + (k - first), E::load(in + k)); });
  }
  return barrier(l, ++count);
}

__device__ bool reduce_scatter_two_shot(const Launch& l, TmaStages& s, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  put_chunks_to_staging(l, s);
  if (!barrier(l, ++count)) return false;
  const uint64_t own = first_of(l, l.me);
  for_each_vector(l, own, end_of(l, l.me), [&](uint64_t k, int n) {
    store(l.output[l.me] + (k - own), staged_sum(l, k, n), n);
  });
  return true;
}

__device__ bool all_gather(const Launch& l, TmaStages& s, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  const uint64_t at = first_of(l, l.me);
  const auto output_at = [&](int d, uint64_t k) { return l.output[peer_at(l, d)] + at + k; };
  const Pieces pieces = l.claim_pieces ? Pieces::kClaimed : Pieces::kFixed;
  put_span(l, s, pieces, l.input[l.me], 0, l.size.chunk_elements, l.ranks, output_at);
  return barrier(l, ++count);
}

__device__ bool all_reduce_two_shot(const Launch& l, TmaStages& s, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  put_chunks_to_staging(l, s);
  if (!barrier(l, ++count)) return false;
  if (s.bytes) {
    fan_out_sums(l, s);
  } else {
    for_each_vector(l, first_of(l, l.me), end_of(l, l.me), [&](uint64_t k, int n) {
      const Values sum = staged_sum(l, k, n);
      for (int j = 0; j < l.ranks; ++j) store(l.output[peer_at(l, j)] + k, sum, n);
    });
  }
  return barrier(l, ++count);
}

__device__ bool all_reduce_one_shot(const Launch& l, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  for_each_vector(l, 0, l.size.elements, [&](uint64_t k, int n) {
    Values sum = {};
    for (int r = 0; r < l.ranks; ++r) accumulate(sum, load(l.input[r] + k, n));
    store(l.output[l.me] + k, sum, n);
  });
  return barrier(l, ++count);
}

__device__ void run(const Launch& l) {
  __shared__ uint32_t count;
  if (threadIdx.x == 0) count = l.counts[blockIdx.x];
  TmaStages s = tma_stages(l);  // its __syncthreads also publishes `count`
  __syncthreads();
  uint32_t c = count;
  switch (l.algorithm) {
    case Algorithm::kReduceScatterAdd: reduce_scatter_add<F32Elements>(l, c); break;
    case Algorithm::kReduceScatterAddBf16: reduce_scatter_add<Bf16Elements>(l, c); break;
    case Algorithm::kReduceScatterTwoShot: reduce_scatter_two_shot(l, s, c); break;
    case Algorithm::kAllGather: all_gather(l, s, c); break;
    case Algorithm::kAllReduceTwoShot: all_reduce_two_shot(l, s, c); break;
    case Algorithm::kAllReduceOneShot: all_reduce_one_shot(l, c); break;
  }
  if (threadIdx.x == 0 && s.bytes) ptx::bulk_wait_group<0>();  // no bulk copy outlives the block
  if (threadIdx.x == 0 && l.claim_pieces) leave_queue(l);
  // Counted as if every barrier passed: after a timeout the sample fails and the next resets.
  if (threadIdx.x == 0) l.counts[blockIdx.x] = c;
}

__global__ void __launch_bounds__(kMaxThreads) collective(Launch l) { run(l); }

// Every rank of the set in one grid: blockIdx.y is the rank.
struct LaunchSet {
  Launch rank[kRanks];
};
__global__ void __launch_bounds__(kMaxThreads) collective_in_one_grid(LaunchSet s) { run(s.rank[blockIdx.y]); }

constexpr uint32_t kMbarrierBytes = 16;  // the two stages' mbarriers

// Two stages and their barriers, and at least what keeps a second block off an SM (blocks = SMs).
size_t dynamic_smem_of(uint32_t stage_bytes, int device) {
  if (!stage_bytes) return 0;
  return std::max<size_t>(2 * size_t(stage_bytes) + kMbarrierBytes, kernels::detail::one_block_per_sm_smem(device));
}

uint32_t stage_bytes_of(uint64_t smem_bytes) { return uint32_t(smem_bytes / 2 / 16 * 16); }

bool uses_tma(Algorithm a) {
  return a == Algorithm::kReduceScatterTwoShot || a == Algorithm::kAllGather || a == Algorithm::kAllReduceTwoShot;
}

bool adds_into_owner(Algorithm a) { return a == Algorithm::kReduceScatterAdd || a == Algorithm::kReduceScatterAddBf16; }

// Throws unless the kernel can run `l`: elements of its algorithm's type, and (for the adds into
// the owner, which take whole vectors only) chunks of whole vectors.
void check_launch(const Launch& l) {
  const CollectiveElement e = element_of(l.algorithm);
  if (l.size.element != e)
    throw RuntimeFailure(std::string("a collective of ") + to_string(e) + " launched with a size in " +
                         to_string(l.size.element));
  if (l.claim_pieces && (l.algorithm != Algorithm::kAllGather || !l.queue))
    throw RuntimeFailure("only the all-gather claims pieces, and only with a queue");
  if (adds_into_owner(l.algorithm) && l.size.chunk_elements % vector_elements(e) != 0)
    throw RuntimeFailure("a reduce-scatter by atomic adds launched with chunks of " +
                         std::to_string(l.size.chunk_elements) + " elements, not whole 16-byte vectors");
}

}  // namespace

CollectiveElement element_of(Algorithm a) {
  return a == Algorithm::kReduceScatterAddBf16 ? CollectiveElement::kBf16 : CollectiveElement::kF32;
}

uint32_t tma_stage_bytes(uint64_t smem_bytes) { return stage_bytes_of(smem_bytes); }

std::optional<std::string> unsupported_reason(Algorithm a, int blocks, int threads, int ranks, uint64_t smem_bytes,
                                              int device) {
  if (blocks < 1 || blocks > kMaxBlocks)
    return "blocks must be 1.." + std::to_string(kMaxBlocks) + " (the barrier words of a rank hold that many)";
  if (threads < 32 || threads > kMaxThreads || threads % 32 != 0)
    return "threads must be whole warps from 32 to " + std::to_string(kMaxThreads);
  if (threads < ranks)
    return "threads (" + std::to_string(threads) + ") must be at least the ranks (a thread per peer meets at a barrier)";
  if (a == Algorithm::kReduceScatterAdd) return kernels::requires_hopper(device, "16-byte f32 reductions (red.add.v4.f32)");
  if (a == Algorithm::kReduceScatterAddBf16) {
    if (smem_bytes) return "this algorithm has no TMA variant";
    return kernels::requires_hopper(device, "16-byte bf16x2 reductions (red.add.noftz.v4.bf16x2)");
  }
  if (!smem_bytes) return std::nullopt;
  if (!uses_tma(a)) return "this algorithm has no TMA variant";
  if (auto why = kernels::requires_hopper(device, "TMA bulk copies")) return why;
  const uint32_t stage = stage_bytes_of(smem_bytes);
  if (stage < 16 || stage >= (1u << 20))
    return "smem_bytes " + std::to_string(smem_bytes) + " must give two stages of 16 bytes to 1 MiB";
  int optin = 0;
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "querying the opt-in shared memory per block");
  if (dynamic_smem_of(stage, device) > size_t(optin))
    return "smem_bytes " + std::to_string(smem_bytes) + " plus two mbarriers exceed this GPU's " + std::to_string(optin) +
           " bytes of shared memory per block";
  return std::nullopt;
}

void prepare_tma(uint64_t smem_bytes, int device) {
  const int bytes = int(dynamic_smem_of(stage_bytes_of(smem_bytes), device));
  for (const void* kernel : {reinterpret_cast<const void*>(collective), reinterpret_cast<const void*>(collective_in_one_grid)})
    cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
               "allowing " + std::to_string(bytes) + " bytes of dynamic shared memory for the collective kernel");
}

void launch(const Launch& l, int blocks, int threads, cudaStream_t stream) {
  check_launch(l);
  const size_t smem = dynamic_smem_of(l.tma_stage_bytes, kernels::detail::current_device());
  collective<<<blocks, threads, smem, stream>>>(l);
  cuda_check(cudaGetLastError(), "launching a collective");
}

void launch_in_one_grid(const std::vector<Launch>& ranks, int blocks, int threads, cudaStream_t stream) {
  if (ranks.empty() || ranks.size() > size_t(kRanks)) throw RuntimeFailure("launch_in_one_grid takes 1 to 8 ranks");
  LaunchSet s;
  for (size_t r = 0; r < ranks.size(); ++r) {
    check_launch(ranks[r]);
    s.rank[r] = ranks[r];
  }
  // One grid holds every rank's blocks: no padding to one block per SM (they must all be resident).
  const size_t smem = ranks[0].tma_stage_bytes ? 2 * size_t(ranks[0].tma_stage_bytes) + kMbarrierBytes : 0;
  collective_in_one_grid<<<dim3(unsigned(blocks), unsigned(ranks.size())), threads, smem, stream>>>(s);
  cuda_check(cudaGetLastError(), "launching every rank's collective in one grid");
}

}  // namespace p2pbench::collectives
