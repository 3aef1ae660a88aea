#include "methods/collectives/collective_kernels.hpp"

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/device_caps.hpp"
#include "kernels/live_clock.cuh"
#include "kernels/ptx.cuh"

namespace p2pbench::collectives {
namespace {

constexpr int kMaxThreads = 1024;
constexpr uint32_t kPollsPerCheck = 64;
constexpr int kVector = 4;  // f32 per 16-byte access
constexpr int kRanks = kernels::kMaxCollectiveRanks;

__device__ bool wait_for_count(const Launch& l, const uint32_t* word, uint32_t count, int peer) {
  kernels::LiveClock clock(l.heartbeat);
  for (uint32_t polls = 1;; ++polls) {
    if (int32_t(ptx::ld_acquire_sys(word) - count) >= 0) return true;
    if (polls % kPollsPerCheck != 0) continue;
    if (ptx::ld_relaxed_sys_u32(&l.header->timed_out) != 0) return false;
    if (clock.waited_ns() > l.timeout_ns) {
      if (atomicCAS(&l.header->timed_out, 0u, 1u) == 0u) {
        l.header->block = blockIdx.x;
        l.header->peer = uint32_t(peer);
        l.header->count = count;
      }
      return false;
    }
  }
}

// Block blockIdx.x of every rank meets here (see the header). `count` is the block's barrier
// count, the same on every rank.
__device__ bool barrier(const Launch& l, uint32_t count) {
  __syncthreads();  // the block's earlier accesses come before the release below
  bool ok = true;
  const int peer = int(threadIdx.x);
  if (peer < l.ranks && peer != l.me) {
    ptx::st_release_sys(l.barrier_words[peer] + blockIdx.x * kRanks + l.me, count);
    ok = wait_for_count(l, l.barrier_words[l.me] + blockIdx.x * kRanks + peer, count, peer);
  }
  return __syncthreads_and(ok) != 0;
}

// f(k, n) for the block's share of elements [first, end): n = 4 at 16-byte vectors k (first is
// a multiple of 4), the tail of fewer than 4 by block 0's thread 0.
template <class F>
__device__ void for_each_vector(uint64_t first, uint64_t end, F f) {
  const uint64_t vectors = (end - first) / kVector, tail = (end - first) % kVector;
  for (uint64_t v = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; v < vectors; v += uint64_t(gridDim.x) * blockDim.x)
    f(first + v * kVector, kVector);
  if (tail && blockIdx.x == 0 && threadIdx.x == 0) f(first + vectors * kVector, int(tail));
}

struct Values {
  float v[kVector];
};

__device__ __forceinline__ Values load(const float* p, int n) {
  Values x;
  if (n == kVector) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    x = {{q.x, q.y, q.z, q.w}};
  } else {
    for (int i = 0; i < n; ++i) x.v[i] = p[i];
  }
  return x;
}

__device__ __forceinline__ void store(float* p, const Values& x, int n) {
  if (n == kVector) {
    *reinterpret_cast<float4*>(p) = make_float4(x.v[0], x.v[1], x.v[2], x.v[3]);
    return;
  }
  for (int i = 0; i < n; ++i) p[i] = x.v[i];
}

__device__ __forceinline__ void add_into(float* p, const Values& x, int n) {
  if (n == kVector) return ptx::red_add_sys_v4_f32(p, x.v[0], x.v[1], x.v[2], x.v[3]);
  for (int i = 0; i < n; ++i) ptx::red_add_sys_f32(p + i, x.v[i]);
}

__device__ __forceinline__ void accumulate(Values& sum, const Values& x) {
  for (int i = 0; i < kVector; ++i) sum.v[i] += x.v[i];
}

// Rank r's chunk of the vector, [first_of(r), end_of(r)) (CollectiveSize::first / end, in device code).
__device__ __forceinline__ uint64_t first_of(const Launch& l, int r) {
  return min(l.size.elements, uint64_t(r) * l.size.chunk_elements);
}
__device__ __forceinline__ uint64_t end_of(const Launch& l, int r) {
  return min(l.size.elements, uint64_t(r + 1) * l.size.chunk_elements);
}

// The peers in an order that starts after this rank, so that the ranks do not all write rank 0 first.
__device__ __forceinline__ int peer_at(const Launch& l, int j) { return (l.me + j) % l.ranks; }

// Each peer's chunk of this rank's input into the peer's staging slot.
__device__ void put_chunks_to_staging(const Launch& l) {
  for (int j = 1; j < l.ranks; ++j) {
    const int r = peer_at(l, j);
    const uint64_t first = first_of(l, r);
    for_each_vector(first, end_of(l, r), [&](uint64_t k, int n) { store(l.staging[r] + (k - first), load(l.input[l.me] + k, n), n); });
  }
}

// This rank's chunk: its own input and the staged chunks of the peers, summed in rank order.
__device__ __forceinline__ Values staged_sum(const Launch& l, uint64_t k, int n) {
  const uint64_t first = first_of(l, l.me);
  Values sum = {};
  for (int r = 0; r < l.ranks; ++r) accumulate(sum, r == l.me ? load(l.input[l.me] + k, n) : load(l.inbox[r] + (k - first), n));
  return sum;
}

__device__ bool reduce_scatter_add(const Launch& l, uint32_t& count) {
  const uint64_t own = first_of(l, l.me);
  for_each_vector(own, end_of(l, l.me), [&](uint64_t k, int n) { store(l.output[l.me] + (k - own), load(l.input[l.me] + k, n), n); });
  if (!barrier(l, ++count)) return false;
  for (int j = 1; j < l.ranks; ++j) {
    const int r = peer_at(l, j);
    const uint64_t first = first_of(l, r);
    for_each_vector(first, end_of(l, r), [&](uint64_t k, int n) { add_into(l.output[r] + (k - first), load(l.input[l.me] + k, n), n); });
  }
  return barrier(l, ++count);
}

__device__ bool reduce_scatter_two_shot(const Launch& l, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  put_chunks_to_staging(l);
  if (!barrier(l, ++count)) return false;
  const uint64_t own = first_of(l, l.me);
  for_each_vector(own, end_of(l, l.me), [&](uint64_t k, int n) { store(l.output[l.me] + (k - own), staged_sum(l, k, n), n); });
  return true;
}

__device__ bool all_gather(const Launch& l, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  const uint64_t at = first_of(l, l.me);
  for (int j = 0; j < l.ranks; ++j) {
    const int r = peer_at(l, j);
    for_each_vector(0, l.size.chunk_elements, [&](uint64_t k, int n) { store(l.output[r] + at + k, load(l.input[l.me] + k, n), n); });
  }
  return barrier(l, ++count);
}

__device__ bool all_reduce_two_shot(const Launch& l, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  put_chunks_to_staging(l);
  if (!barrier(l, ++count)) return false;
  for_each_vector(first_of(l, l.me), end_of(l, l.me), [&](uint64_t k, int n) {
    const Values sum = staged_sum(l, k, n);
    for (int j = 0; j < l.ranks; ++j) store(l.output[peer_at(l, j)] + k, sum, n);
  });
  return barrier(l, ++count);
}

__device__ bool all_reduce_one_shot(const Launch& l, uint32_t& count) {
  if (!barrier(l, ++count)) return false;
  for_each_vector(0, l.size.elements, [&](uint64_t k, int n) {
    Values sum = {};
    for (int r = 0; r < l.ranks; ++r) accumulate(sum, load(l.input[r] + k, n));
    store(l.output[l.me] + k, sum, n);
  });
  return barrier(l, ++count);
}

__device__ void run(const Launch& l) {
  __shared__ uint32_t count;
  if (threadIdx.x == 0) count = l.counts[blockIdx.x];
  __syncthreads();
  uint32_t c = count;
  switch (l.algorithm) {
    case Algorithm::kReduceScatterAdd: reduce_scatter_add(l, c); break;
    case Algorithm::kReduceScatterTwoShot: reduce_scatter_two_shot(l, c); break;
    case Algorithm::kAllGather: all_gather(l, c); break;
    case Algorithm::kAllReduceTwoShot: all_reduce_two_shot(l, c); break;
    case Algorithm::kAllReduceOneShot: all_reduce_one_shot(l, c); break;
  }
  // Counted as if every barrier passed: after a timeout the sample fails and the next resets.
  if (threadIdx.x == 0) l.counts[blockIdx.x] = c;
}

__global__ void __launch_bounds__(kMaxThreads) collective(Launch l) { run(l); }

// Every rank of the set in one grid: blockIdx.y is the rank.
struct LaunchSet {
  Launch rank[kRanks];
};
__global__ void __launch_bounds__(kMaxThreads) collective_in_one_grid(LaunchSet s) { run(s.rank[blockIdx.y]); }

}  // namespace

std::optional<std::string> unsupported_reason(Algorithm a, int blocks, int threads, int ranks, int device) {
  if (blocks < 1 || blocks > kMaxBlocks)
    return "blocks must be 1.." + std::to_string(kMaxBlocks) + " (the barrier words of a rank hold that many)";
  if (threads < 32 || threads > kMaxThreads || threads % 32 != 0)
    return "threads must be whole warps from 32 to " + std::to_string(kMaxThreads);
  if (threads < ranks) return "threads (" + std::to_string(threads) + ") must be at least the ranks (a thread per peer meets at a barrier)";
  if (a == Algorithm::kReduceScatterAdd) return kernels::requires_hopper(device, "16-byte f32 reductions (red.add.v4.f32)");
  return std::nullopt;
}

void reset_barriers(uint32_t* words, uint32_t* counts, BarrierHeader* header, cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(words, 0, kBarrierWordsBytes, stream), "zeroing the collective's barrier words");
  cuda_check(cudaMemsetAsync(counts, 0, kMaxBlocks * sizeof(uint32_t), stream), "zeroing the collective's barrier counts");
  cuda_check(cudaMemsetAsync(header, 0, sizeof(BarrierHeader), stream), "zeroing the collective's barrier header");
}

void launch(const Launch& l, int blocks, int threads, cudaStream_t stream) {
  collective<<<blocks, threads, 0, stream>>>(l);
  cuda_check(cudaGetLastError(), "launching a collective");
}

void launch_in_one_grid(const std::vector<Launch>& ranks, int blocks, int threads, cudaStream_t stream) {
  if (ranks.empty() || ranks.size() > size_t(kRanks)) throw RuntimeFailure("launch_in_one_grid takes 1 to 8 ranks");
  LaunchSet s;
  for (size_t r = 0; r < ranks.size(); ++r) s.rank[r] = ranks[r];
  collective_in_one_grid<<<dim3(unsigned(blocks), unsigned(ranks.size())), threads, 0, stream>>>(s);
  cuda_check(cudaGetLastError(), "launching every rank's collective in one grid");
}

}  // namespace p2pbench::collectives
