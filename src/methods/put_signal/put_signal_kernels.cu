// The put_signal kernels. Flag words are read and written by one thread per channel; the data
// moves by the whole warp (LD/ST) or by lane 0's bulk copies (TMA).
#include "methods/put_signal/put_signal_kernels.hpp"

#include <cuda.h>  // types only: the stream memory operations are fetched at run time
#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/device_caps.hpp"
#include "kernels/live_clock.cuh"
#include "kernels/pattern_device.cuh"
#include "kernels/stream_value_ops.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::put_signal {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kReceiverThreads = 128;
constexpr uint32_t kFullWarp = 0xffffffffu;
constexpr uint32_t kMbarrierBytes = 8;
// Polls between looks at the clock and at the header (whether another wait of this end gave up).
constexpr uint32_t kPollsPerCheck = 64;

// Waits until *word == want. False when it gave up (timeout, recorded in the header) or another
// wait of this end already had.
template <bool kAcquire>
__device__ bool wait_for(const uint32_t* word, uint32_t want, const Side& s, Wait which, uint64_t chunk) {
  kernels::LiveClock clock(s.heartbeat);
  for (uint32_t polls = 1;; ++polls) {
    const uint32_t v = kAcquire ? ptx::ld_acquire_sys(word) : ptx::ld_relaxed_sys_u32(word);
    if (v == want) return true;
    if (polls % kPollsPerCheck != 0) continue;
    if (ptx::ld_relaxed_sys_u32(&s.header->timed_out) != 0) return false;
    if (clock.waited_ns() > s.timeout_ns) {
      if (atomicCAS(&s.header->timed_out, 0u, uint32_t(which)) == 0u) s.header->stuck_chunk = uint32_t(chunk);
      return false;
    }
  }
}

// The sender's credit for chunk k: its slot free (the receiver consumed the chunk that last used
// it), then taken.
__device__ bool take_credit(const Side& s, uint64_t k) {
  uint32_t* slot = s.busy + s.g.credit_slot(k);
  if (!wait_for<true>(slot, 0u, s, kWaitedForCredit, k)) return false;
  ptx::st_relaxed_sys(slot, 1u);
  return true;
}

// Where chunk k's bytes start in the source.
__device__ __forceinline__ uint64_t source_offset(const Side& s, uint64_t k) {
  return (s.gather ? uint64_t(s.gather[k]) : k) * s.g.chunk_bytes;
}

template <bool kRelease>
__device__ void signal(const Side& s, uint64_t k) {
  uint32_t* flag = s.ready + s.g.credit_slot(k);
  if (kRelease)
    ptx::st_release_sys(flag, 1u);
  else
    ptx::st_relaxed_sys(flag, 1u);
}

template <bool kRelease>
__global__ void __launch_bounds__(kMaxThreads, 1) ldst_sender(Side s) {
  const uint32_t lane = threadIdx.x & 31;
  const uint64_t channel = (uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const uint64_t chunks = s.g.chunks();
  const auto* src = static_cast<const uint8_t*>(s.src);
  auto* dst = static_cast<uint8_t*>(s.dst);
  for (uint64_t k = channel; k < chunks; k += s.g.channels) {
    bool go = true;
    if (lane == 0) go = take_credit(s, k);
    if (!__shfl_sync(kFullWarp, go, 0)) return;
    kernels::detail::copy_as<uint4, 4>(src + source_offset(s, k), dst + k * s.g.chunk_bytes, s.g.length_of(k), lane, 32);
    // bar.warp.sync orders every lane's stores before lane 0's signal (DeepEP's pattern).
    __syncwarp();
    if (lane == 0) signal<kRelease>(s, k);
  }
}

// Waits until every bulk store group of this thread but the last `recent` ones has completed
// (written to the peer's memory): `recent` is at most 2 here, more is waited for as 2.
__device__ __forceinline__ void wait_all_but(uint32_t recent) {
  if (recent >= 2)
    ptx::bulk_wait_group<2>();
  else
    ptx::bulk_wait_group<1>();
}

// Lane 0 of each warp: the chunk in pieces of at most `stage_bytes`, through the warp's two
// stages, the load of piece i + 1 in flight while piece i is stored. A chunk is signalled once
// every store of it has completed (written to the peer's memory), and that wait overlaps the
// next chunk's stores: chunk k is signalled after chunk k + 1's stores are issued. With one
// chunk in flight the next chunk's credit needs this one consumed, so it is signalled first.
template <bool kRelease>
__global__ void __launch_bounds__(kMaxThreads, 1) tma_sender(Side s, uint32_t stage_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if ((threadIdx.x & 31) != 0) return;
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t stage0 = base + warp * 2 * stage_bytes;
  const uint32_t bar0 = base + warps * 2 * stage_bytes + warp * 2 * kMbarrierBytes;
  for (uint32_t st = 0; st < 2; ++st) ptx::mbarrier_init(bar0 + st * kMbarrierBytes, 1);
  ptx::fence_mbarrier_init();
  ptx::fence_proxy_async_shared_cta();

  const auto* src = static_cast<const uint8_t*>(s.src);
  auto* dst = static_cast<uint8_t*>(s.dst);
  uint32_t phases = 0;  // bit st: the parity the next wait on stage st expects
  uint64_t piece = 0;   // pieces issued, over every chunk: stage = piece & 1
  auto load = [&](uint64_t p, uint64_t at, uint32_t n) {
    const uint32_t st = uint32_t(p & 1);
    ptx::mbarrier_arrive_expect_tx(bar0 + st * kMbarrierBytes, n);
    ptx::bulk_load_global_to_shared(stage0 + st * stage_bytes, src + at, n, bar0 + st * kMbarrierBytes);
  };
  const uint64_t chunks = s.g.chunks();
  constexpr uint64_t kNone = ~0ull;
  uint64_t pending = kNone;  // the chunk whose stores are issued and not yet signalled
  for (uint64_t k = uint64_t(blockIdx.x) * warps + warp; k < chunks; k += s.g.channels) {
    if (s.g.in_flight == 1 && pending != kNone) {
      ptx::bulk_wait_group<0>();
      signal<kRelease>(s, pending);
      pending = kNone;
    }
    if (!take_credit(s, k)) {
      ptx::bulk_wait_group<0>();  // the previous chunk's stores still read this warp's stages
      return;
    }
    const uint64_t from = source_offset(s, k), offset = k * s.g.chunk_bytes;
    const uint32_t len = s.g.length_of(k);
    ptx::bulk_wait_group_read<0>();  // the stage of the first piece is no longer read by a store
    load(piece, from, len < stage_bytes ? len : stage_bytes);
    uint32_t groups = 0;
    for (uint32_t pos = 0; pos < len; pos += stage_bytes, ++piece, ++groups) {
      const uint32_t n = len - pos < stage_bytes ? len - pos : stage_bytes;
      if (pos + n < len) {
        ptx::bulk_wait_group_read<0>();  // the other stage's last store has read it
        const uint32_t next = len - pos - n < stage_bytes ? len - pos - n : stage_bytes;
        load(piece + 1, from + pos + n, next);
      }
      const uint32_t st = uint32_t(piece & 1);
      while (!ptx::mbarrier_try_wait_parity(bar0 + st * kMbarrierBytes, (phases >> st) & 1)) {
      }
      phases ^= 1u << st;
      ptx::bulk_store_shared_to_global(dst + offset + pos, stage0 + st * stage_bytes, n);
      ptx::bulk_commit_group();
    }
    if (pending != kNone) {
      wait_all_but(groups);  // the previous chunk's stores, issued before this chunk's groups
      signal<kRelease>(s, pending);
    }
    pending = k;
  }
  if (pending != kNone) {
    ptx::bulk_wait_group<0>();
    signal<kRelease>(s, pending);
  }
#else
  __trap();  // tma_unsupported_reason refuses GPUs below 9.0
#endif
}

// Chunk k's first and last 16 bytes against the source's data (weak loads, after the signal's wait).
__device__ bool chunk_intact(const Side& s, const uint8_t* dst, uint64_t k, uint64_t seed) {
  const uint32_t len = s.g.length_of(k);
  const uint64_t at[2] = {k * s.g.chunk_bytes, k * s.g.chunk_bytes + len - 16};
  const uint64_t from[2] = {source_offset(s, k), source_offset(s, k) + len - 16};
  for (int end = 0; end < 2; ++end)
    for (uint64_t w = 0; w < 2; ++w) {
      const uint64_t word = from[end] / 8 + w;
      const uint64_t want = s.bf16_tokens ? kernels::token_word(seed, word) : kernels::pattern_word(seed, word);
      if (ptx::ld_weak_u64(dst + at[end] + 8 * w) != want) return false;
    }
  return true;
}

template <bool kAcquire>
__global__ void receiver(Side s) {
  const uint64_t channel = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (channel >= s.g.channels) return;
  const uint64_t seed = s.header->seed;
  const auto* dst = static_cast<const uint8_t*>(s.dst);
  const uint64_t chunks = s.g.chunks();
  for (uint64_t k = channel; k < chunks; k += s.g.channels) {
    const uint32_t slot = s.g.credit_slot(k);
    if (!wait_for<kAcquire>(s.ready + slot, 1u, s, kWaitedForSignal, k)) {
      // Give every credit of the channel back: a sender waiting for one (a copy-engine stream
      // has no timeout of its own) then runs to its end.
      for (uint32_t i = 0; i < s.g.in_flight; ++i) ptx::st_relaxed_sys(s.busy + channel * s.g.in_flight + i, 0u);
      return;
    }
    if (!chunk_intact(s, dst, k, seed)) {
      atomicAdd(&s.header->bad_chunks, 1u);
      atomicCAS(&s.header->first_bad_chunk, 0u, uint32_t(k + 1));
    }
    ptx::st_relaxed_sys(s.ready + slot, 0u);
    ptx::st_release_sys(s.busy + slot, 0u);
  }
}

__global__ void set_seed(RegionHeader* header, uint64_t seed) {
  header->seed = seed;
  header->one = 1;
}

uint32_t tma_stage_bytes(int threads, uint64_t smem_bytes) {
  const uint64_t per_warp = smem_bytes / uint64_t(threads / 32);
  return uint32_t((per_warp / 2) & ~uint64_t(kAlignment - 1));
}

size_t tma_dynamic_smem(int threads, uint64_t smem_bytes, int device) {
  const size_t warps = size_t(threads / 32);
  const size_t used = warps * (2 * size_t(tma_stage_bytes(threads, smem_bytes)) + 2 * kMbarrierBytes);
  const size_t pad = kernels::detail::one_block_per_sm_smem(device);
  return used > pad ? used : pad;
}

std::optional<std::string> shape_problem(int blocks, int threads) {
  if (blocks < 1) return "blocks must be at least 1 (got " + std::to_string(blocks) + ")";
  if (threads < 32 || threads > kMaxThreads || threads % 32 != 0)
    return "threads per block must be a multiple of 32 in 32..1024 (got " + std::to_string(threads) + ")";
  return std::nullopt;
}

void allow_smem(const void* kernel, size_t bytes, const char* what) {
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
             std::string("allowing ") + std::to_string(bytes) + " bytes of dynamic shared memory for " + what);
}

}  // namespace

void reset_region(void* region, uint64_t seed, cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(region, 0, kSignalRegionBytes, stream), "zeroing a put_signal region");
  set_seed<<<1, 1, 0, stream>>>(static_cast<RegionHeader*>(region), seed);
  cuda_check_launch("recording the sample's seed in a put_signal region");
}

std::optional<std::string> ldst_unsupported_reason(int blocks, int threads, int device) {
  if (auto why = shape_problem(blocks, threads)) return why;
  int optin = 0;
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "querying the opt-in shared memory per block");
  if (kernels::detail::one_block_per_sm_smem(device) > size_t(optin))
    return "this GPU cannot give one block more than half of an SM's shared memory, so one block per SM cannot be "
           "enforced";
  return std::nullopt;
}

void ldst_prepare(int device) {
  const size_t pad = kernels::detail::one_block_per_sm_smem(device);
  allow_smem(reinterpret_cast<const void*>(ldst_sender<true>), pad, "the put_signal LD/ST sender");
  allow_smem(reinterpret_cast<const void*>(ldst_sender<false>), pad, "the put_signal LD/ST sender");
}

void ldst_send(const Side& s, int blocks, int threads, Ordering o, cudaStream_t stream) {
  const size_t pad = kernels::detail::one_block_per_sm_smem(kernels::detail::current_device());
  if (o == Ordering::kNoRelease)
    ldst_sender<false><<<blocks, threads, pad, stream>>>(s);
  else
    ldst_sender<true><<<blocks, threads, pad, stream>>>(s);
  cuda_check_launch("the put_signal LD/ST sender");
}

std::optional<std::string> tma_unsupported_reason(int blocks, int threads, uint64_t smem_bytes, int device) {
  if (auto why = shape_problem(blocks, threads)) return why;
  if (auto why = kernels::requires_hopper(device, "TMA bulk copies")) return why;
  if (tma_stage_bytes(threads, smem_bytes) < kAlignment)
    return "smem_bytes " + std::to_string(smem_bytes) + " gives each of the " + std::to_string(threads / 32) +
           " warps two stages of less than 16 bytes";
  int optin = 0;
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "querying the opt-in shared memory per block");
  if (tma_dynamic_smem(threads, smem_bytes, device) > size_t(optin))
    return "smem_bytes " + std::to_string(smem_bytes) + " plus the warps' mbarriers exceed this GPU's " +
           std::to_string(optin) + " bytes of shared memory per block";
  return std::nullopt;
}

void tma_prepare(int threads, uint64_t smem_bytes, int device) {
  const size_t smem = tma_dynamic_smem(threads, smem_bytes, device);
  allow_smem(reinterpret_cast<const void*>(tma_sender<true>), smem, "the put_signal TMA sender");
  allow_smem(reinterpret_cast<const void*>(tma_sender<false>), smem, "the put_signal TMA sender");
}

void tma_send(const Side& s, int blocks, int threads, uint64_t smem_bytes, Ordering o, cudaStream_t stream) {
  const size_t smem = tma_dynamic_smem(threads, smem_bytes, kernels::detail::current_device());
  const uint32_t stage = tma_stage_bytes(threads, smem_bytes);
  if (o == Ordering::kNoRelease)
    tma_sender<false><<<blocks, threads, smem, stream>>>(s, stage);
  else
    tma_sender<true><<<blocks, threads, smem, stream>>>(s, stage);
  cuda_check_launch("the put_signal TMA sender");
}

CopyEngineSender::CopyEngineSender() { kernels::require_stream_value_ops(); }

void CopyEngineSender::ensure_forks(size_t count) {
  if (!fork_) fork_ = make_untimed_event("forking the copy-engine sender's streams");
  while (forks_.size() < count) {
    forks_.push_back(make_stream("a stream of the copy-engine sender"));
    joins_.push_back(make_untimed_event("joining the copy-engine sender's streams"));
  }
}

void CopyEngineSender::send(const Side& s, Ordering o, CeSignals how, cudaStream_t stream) {
  if (s.gather) throw RuntimeFailure("the copy-engine sender moves contiguous chunks only (no gather)");
  if (how.by_copy && o == Ordering::kNoRelease)
    throw RuntimeFailure("a signal copied behind its chunk has no unordered form");
  const uint64_t streams = std::min<uint64_t>(s.g.in_flight, s.g.chunks());
  if (streams <= 1) return send_chunks(s, o, how, stream, 0, 1);
  ensure_forks(streams);
  cuda_check(cudaEventRecord(fork_.get(), stream), "forking the copy-engine sender's streams");
  for (uint64_t i = 0; i < streams; ++i) {
    cuda_check(cudaStreamWaitEvent(forks_[i].get(), fork_.get(), 0), "starting a copy-engine sender stream");
    send_chunks(s, o, how, forks_[i].get(), i, streams);
    cuda_check(cudaEventRecord(joins_[i].get(), forks_[i].get()), "ending a copy-engine sender stream");
    cuda_check(cudaStreamWaitEvent(stream, joins_[i].get(), 0), "joining a copy-engine sender stream");
  }
}

uint64_t CopyEngineSender::commands(const Geometry& g, CeSignals how) {
  const uint64_t copies = how.copy_bytes ? (uint64_t(g.chunk_bytes) + how.copy_bytes - 1) / how.copy_bytes : 1;
  return g.chunks() * (3 + copies);
}

// A word set to 1 behind the stream's earlier work: a 4-byte copy of the sender's own `one` on the
// copy engine (ordered behind the copies before it, as they are), or a stream memory write.
void CopyEngineSender::set_word(const Side& s, uint32_t* word, bool by_copy, unsigned write_flags, cudaStream_t stream,
                                const char* what) {
  if (by_copy)
    cuda_check(cudaMemcpyAsync(word, &s.header->one, sizeof(uint32_t), cudaMemcpyDeviceToDevice, stream), what);
  else
    kernels::stream_write_value(stream, word, 1, write_flags, what);
}

void CopyEngineSender::send_chunks(const Side& s, Ordering o, CeSignals how, cudaStream_t stream, uint64_t first,
                                   uint64_t step) const {
  const unsigned signal_flags =
      o == Ordering::kNoRelease ? CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : CU_STREAM_WRITE_VALUE_DEFAULT;
  // Stream-written and ordered, the credit is taken behind the chunk, in one batch of writes with
  // its signal: the take only has to land before the receiver can clear it, after the signal, and
  // a stream operation costs about 2.7 us (two H200, tools/probes/ce_signal_probe.cpp).
  const bool take_with_signal = !how.by_copy && o != Ordering::kNoRelease;
  for (uint64_t k = first; k < s.g.chunks(); k += step) {
    const uint32_t slot = s.g.credit_slot(k);
    kernels::stream_wait_value(stream, s.busy + slot, 0, CU_STREAM_WAIT_VALUE_EQ, "queueing the wait for a put_signal credit");
    if (!take_with_signal)
      set_word(s, s.busy + slot, how.by_copy, CU_STREAM_WRITE_VALUE_DEFAULT, stream, "queueing the taking of a credit");
    const uint64_t length = s.g.length_of(k);
    copy_chunk(s, k * s.g.chunk_bytes, length, how.copy_bytes ? how.copy_bytes : length, how.batched, stream);
    if (take_with_signal) {
      const kernels::WordWrite take_then_signal[] = {{s.busy + slot, 1}, {s.ready + slot, 1}};
      kernels::stream_write_values(stream, take_then_signal, 2, "queueing a put_signal credit's take and signal");
    } else {
      set_word(s, s.ready + slot, how.by_copy, signal_flags, stream, "queueing a put_signal signal");
    }
  }
}

void CopyEngineSender::copy_chunk(const Side& s, uint64_t start, uint64_t length, uint64_t piece, bool batched,
                                  cudaStream_t stream) {
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<size_t> sizes;
  for (uint64_t at = 0; at < length; at += piece) {
    dsts.push_back(static_cast<char*>(s.dst) + start + at);
    srcs.push_back(static_cast<const char*>(s.src) + start + at);
    sizes.push_back(size_t(std::min(piece, length - at)));
  }
  if (!batched) {
    for (size_t i = 0; i < dsts.size(); ++i)
      cuda_check(cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDeviceToDevice, stream),
                 "queueing a put_signal chunk on the copy engine");
    return;
  }
  // The source read in stream order, as a cudaMemcpyAsync reads it.
  cudaMemcpyAttributes attributes = {};
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attributes.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t attribute_index = 0;
  cuda_check(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(), &attributes, &attribute_index, 1,
                                  stream),
             "queueing a put_signal chunk's copies as one batch on the copy engine");
}

int receiver_blocks(uint32_t channels) { return int((channels + kReceiverThreads - 1) / kReceiverThreads); }

void receive(const Side& s, Ordering o, cudaStream_t stream) {
  const int blocks = receiver_blocks(s.g.channels);
  if (o == Ordering::kNoAcquire)
    receiver<false><<<blocks, kReceiverThreads, 0, stream>>>(s);
  else
    receiver<true><<<blocks, kReceiverThreads, 0, stream>>>(s);
  cuda_check_launch("the put_signal receiver");
}

}  // namespace p2pbench::put_signal
