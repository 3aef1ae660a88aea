// The device side of kernels/rank_barrier.hpp. Block b of every rank meets block b of the others:
// a release store of the block's barrier count into each peer's word for (block, this rank),
// then an acquire wait until each peer's word for (block, peer) reaches it. Kernels that give
// block b the same elements on every rank need no grid-wide synchronisation: the barrier orders
// exactly the data those blocks exchange. Every wait gives up after the timeout (counted while
// the host lives, kernels/live_clock.cuh) and records where in the header.
//
// `L` is a launch description with: ranks, me, barrier_words[rank], header, timeout_ns, heartbeat.
#pragma once

#include "kernels/live_clock.cuh"
#include "kernels/ptx.cuh"
#include "kernels/rank_barrier.hpp"

namespace p2pbench::kernels {

constexpr uint32_t kBarrierPollsPerCheck = 64;

// Waits until *word reaches `count` (counts wrap: compared as a signed difference). False when
// it gave up, or another wait of this rank already had.
template <class L>
__device__ bool wait_for_count(const L& l, const uint32_t* word, uint32_t count, uint32_t peer) {
  LiveClock clock(l.heartbeat);
  for (uint32_t polls = 1;; ++polls) {
    if (int32_t(ptx::ld_acquire_sys(word) - count) >= 0) return true;
    if (polls % kBarrierPollsPerCheck != 0) continue;
    if (ptx::ld_relaxed_sys_u32(&l.header->timed_out) != 0) return false;
    if (clock.waited_ns() > l.timeout_ns) {
      if (atomicCAS(&l.header->timed_out, 0u, 1u) == 0u) {
        l.header->block = blockIdx.x;
        l.header->peer = peer;
        l.header->count = count;
      }
      return false;
    }
  }
}

// Block blockIdx.x of every rank meets here; `count` is the block's barrier count, the same on
// every rank. False (on every thread of the block) where a wait gave up.
template <class L>
__device__ bool rank_barrier(const L& l, uint32_t count) {
  __syncthreads();  // the block's earlier accesses come before the release below
  bool ok = true;
  const int peer = int(threadIdx.x);
  if (peer < l.ranks && peer != l.me) {
    ptx::st_release_sys(l.barrier_words[peer] + blockIdx.x * kMaxBarrierRanks + l.me, count);
    ok = wait_for_count(l, l.barrier_words[l.me] + blockIdx.x * kMaxBarrierRanks + peer, count, uint32_t(peer));
  }
  return __syncthreads_and(ok) != 0;
}

}  // namespace p2pbench::kernels
