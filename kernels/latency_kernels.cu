// Ping-pong signal latency (the pointer chase: chase_kernels.cu). Protocol notes: latency_kernels.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/latency_kernels.hpp"
#include "kernels/ce_ping_pong.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/device_caps.hpp"
#include "kernels/live_clock.cuh"
#include "kernels/ping_pong_words.cuh"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {
namespace {

// ----------------------------------------------------------------------------------------
// Ping-pong
// ----------------------------------------------------------------------------------------

constexpr uint32_t kUnitBytes = 16;         // one vector store / load
constexpr uint32_t kMaxBlock = 1024;
// A receiver reads its wait clock once per this many polls (a power of two): a poll pass costs a
// load latency across the link, so the timeout stays within a few microseconds while the spin
// loop carries no clock work on most passes.
constexpr uint32_t kPollsPerClockRead = 16;

// How a payload is cut into 16-byte units and spread over one block.
struct PingPongLayout {
  uint32_t full_units = 0;   // units carrying a full 16 bytes
  uint32_t tail_words = 0;   // the last, partial unit: flag_in_data 8-byte words (0..1),
                             // payload_then_flag 4-byte words (0..3)
  uint32_t units = 0;        // full_units + (tail_words ? 1 : 0)
  uint32_t threads = 0;
  uint32_t per_thread = 0;   // units per thread, rounded up to 1, 2, 4 or 8 (template)
};

PingPongLayout ping_pong_layout(size_t payload_bytes, bool flag_in_data) {
  PingPongLayout l;
  const auto words = static_cast<uint32_t>(payload_bytes / 4);  // 4-byte payload words
  const uint32_t words_per_unit = flag_in_data ? 2 : 4;
  l.full_units = words / words_per_unit;
  l.tail_words = words % words_per_unit;
  l.units = l.full_units + (l.tail_words != 0 ? 1 : 0);
  // As many threads as units (whole warps, at most one block): every store and every poll of
  // a message is issued in parallel.
  l.threads = std::min(kMaxBlock, std::max<uint32_t>(32, (l.units + 31) / 32 * 32));
  const uint32_t need = (l.units + l.threads - 1) / l.threads;
  l.per_thread = 1;
  while (l.per_thread < need) l.per_thread *= 2;
  // unit_of() relies on it: several units per thread only in a full block.
  if (l.per_thread > 1 && l.threads != kMaxBlock) throw std::logic_error("ping-pong layout: partial block");
  return l;
}

struct PingPongParams {
  uint8_t* my_inbox;
  uint8_t* peer_inbox;
  PingPongResult* result;
  uint64_t timeout_ns;
  const uint64_t* heartbeat;
  uint32_t full_units;
  uint32_t tail_words;
  uint32_t rounds;
  uint32_t seq_base;   // message k carries seq_base + k + 1
  uint32_t word_key;   // from the seed
  uint32_t seq_key;    // from the seed
  uint32_t initiator;
};

using ping_pong::kFlagLineBytes;
using ping_pong::seq_hash;
using ping_pong::word_hash;

__device__ __forceinline__ uint64_t pack(uint32_t data, uint32_t seq) {
  return (static_cast<uint64_t>(seq) << 32) | data;
}

// Unit m of thread tid. A thread has more than one unit only in a full 1024-thread block, so
// the stride is the constant 1024 (consecutive threads, consecutive units: coalesced) and the
// compiler needs no run-time multiply per unit.
__device__ __forceinline__ uint32_t unit_of(uint32_t tid, int m) {
  return tid + static_cast<uint32_t>(m) * kMaxBlock;
}

// 4-byte payload words per 16-byte unit: flag_in_data carries 4 sequence bytes with each.
template <bool kFlagInData>
struct Words {
  static constexpr int kPerUnit = kFlagInData ? 2 : 4;
};

// Stores this thread's units of message `seq` into the peer's inbox. `x` = seq_hash ^ the
// direction mask: a data word is word_hash ^ x, an IMAD and a XOR.
template <bool kFlagInData, int S>
__device__ __forceinline__ void send_message(const PingPongParams& p, uint32_t seq, uint32_t x) {
  const auto word = [&](uint32_t unit, uint32_t i) {
    return word_hash(p.word_key, unit * Words<kFlagInData>::kPerUnit + i) ^ x;
  };
  const uint32_t tid = threadIdx.x;
#pragma unroll
  for (int m = 0; m < S; ++m) {
    const uint32_t j = unit_of(tid, m);
    if constexpr (kFlagInData) {
      uint8_t* dst = p.peer_inbox + static_cast<size_t>(j) * kUnitBytes;
      if (j < p.full_units) {
        ptx::st_relaxed_sys_v2_u64(dst, pack(word(j, 0), seq), pack(word(j, 1), seq));
      } else if (j == p.full_units && p.tail_words != 0) {
        ptx::st_relaxed_sys_u64(reinterpret_cast<uint64_t*>(dst), pack(word(j, 0), seq));
      }
    } else {
      uint8_t* dst = p.peer_inbox + kFlagLineBytes + static_cast<size_t>(j) * kUnitBytes;
      if (j < p.full_units) {
        ptx::st_global_v4_u32(dst, word(j, 0), word(j, 1), word(j, 2), word(j, 3));
      } else if (j == p.full_units) {
#pragma unroll
        for (int i = 0; i < 3; ++i)
          if (static_cast<uint32_t>(i) < p.tail_words) ptx::st_global_u32(dst + 4 * i, word(j, i));
      }
    }
  }
  if constexpr (!kFlagInData) {
    // Publish: the barrier orders every thread's payload stores before thread 0's release,
    // and the release (cumulative, system scope) before the flag the peer acquires.
    __syncthreads();
    if (tid == 0) ptx::st_release_sys(reinterpret_cast<uint32_t*>(p.peer_inbox), seq);
  }
}

// tma_then_flag: the block writes message `seq` into its shared memory; one thread puts it with
// one bulk copy and releases the flag once the copy's writes have completed (the put_signal
// TMA sender's order). Payloads are whole 16-byte units here.
template <int S>
__device__ __forceinline__ void send_message_tma(const PingPongParams& p, uint32_t seq, uint32_t x) {
  extern __shared__ __align__(128) uint8_t stage[];
  const uint32_t tid = threadIdx.x;
#pragma unroll
  for (int m = 0; m < S; ++m) {
    const uint32_t j = unit_of(tid, m);
    if (j < p.full_units)
      reinterpret_cast<uint4*>(stage)[j] = make_uint4(word_hash(p.word_key, j * 4) ^ x, word_hash(p.word_key, j * 4 + 1) ^ x,
                                                      word_hash(p.word_key, j * 4 + 2) ^ x, word_hash(p.word_key, j * 4 + 3) ^ x);
  }
  ptx::fence_proxy_async_shared_cta();  // this thread's writes before the bulk copy reads them
  __syncthreads();
  if (tid == 0) {
    ptx::bulk_store_shared_to_global(p.peer_inbox + kFlagLineBytes, static_cast<uint32_t>(__cvta_generic_to_shared(stage)),
                                     p.full_units * kUnitBytes);
    ptx::bulk_commit_group();
    ptx::bulk_wait_group<0>();
    ptx::st_release_sys(reinterpret_cast<uint32_t*>(p.peer_inbox), seq);
  }
}

template <SignalProtocol P, int S>
__device__ __forceinline__ void send_any(const PingPongParams& p, uint32_t seq, uint32_t x) {
  if constexpr (P == SignalProtocol::kTmaThenFlag)
    send_message_tma<S>(p, seq, x);
  else
    send_message<P == SignalProtocol::kFlagInData, S>(p, seq, x);
}

// Waits for the whole message `seq` in the own inbox and checks every payload byte of it
// (expected word = word_hash ^ x). Returns false, uniformly across the block, on a timeout.
// A wrong byte sets *bad_slot (shared) for thread 0 to count later.
template <int S>
__device__ __forceinline__ bool receive_flag_in_data(const PingPongParams& p, uint32_t seq, uint32_t x,
                                                     uint32_t* bad_slot) {
  const auto word = [&](uint32_t unit, uint32_t i) { return word_hash(p.word_key, unit * 2 + i) ^ x; };
  const uint32_t tid = threadIdx.x;
  bool late = false;
  bool bad = false;
  // Poll all of this thread's words at once until each carries `seq`: every load of a pass is
  // issued before the first check, so a pass costs one load latency, not S. The data of the
  // final, complete pass is the one checked.
  LiveClock clock(p.heartbeat);
  for (uint32_t polls = 1;; ++polls) {
    uint64_t a[S];
    uint64_t b[S];
#pragma unroll
    for (int m = 0; m < S; ++m) {
      const uint32_t j = unit_of(tid, m);
      const uint8_t* src = p.my_inbox + static_cast<size_t>(j) * kUnitBytes;
      a[m] = b[m] = 0;
      if (j < p.full_units) {
        ptx::ld_relaxed_sys_v2_u64(src, a[m], b[m]);
      } else if (j == p.full_units && p.tail_words != 0) {
        a[m] = ptx::ld_relaxed_sys_u64(src);
      }
    }
    bool complete = true;
    bad = false;
#pragma unroll
    for (int m = 0; m < S; ++m) {
      const uint32_t j = unit_of(tid, m);
      if (j < p.full_units) {
        complete &= (static_cast<uint32_t>(a[m] >> 32) == seq) & (static_cast<uint32_t>(b[m] >> 32) == seq);
        bad |= (static_cast<uint32_t>(a[m]) != word(j, 0)) | (static_cast<uint32_t>(b[m]) != word(j, 1));
      } else if (j == p.full_units && p.tail_words != 0) {
        complete &= static_cast<uint32_t>(a[m] >> 32) == seq;
        bad |= static_cast<uint32_t>(a[m]) != word(j, 0);
      }
    }
    if (complete) break;
    if (polls % kPollsPerClockRead == 0 && clock.waited_ns() > p.timeout_ns) {
      late = true;
      break;
    }
  }
  if (!late && bad) *bad_slot = 1;
  // Answer only once the whole message is in: every thread's words.
  return __syncthreads_or(late) == 0;
}

template <int S>
__device__ __forceinline__ bool receive_payload_then_flag(const PingPongParams& p, uint32_t seq, uint32_t x,
                                                          uint32_t* bad_slot) {
  const auto word = [&](uint32_t unit, uint32_t i) { return word_hash(p.word_key, unit * 4 + i) ^ x; };
  const uint32_t tid = threadIdx.x;
  // One thread acquires the flag; the barrier passes the acquire on to the block.
  bool late = false;
  if (tid == 0) {
    LiveClock clock(p.heartbeat);
    for (uint32_t polls = 1; ptx::ld_acquire_sys(reinterpret_cast<const uint32_t*>(p.my_inbox)) != seq; ++polls) {
      if (polls % kPollsPerClockRead == 0 && clock.waited_ns() > p.timeout_ns) {
        late = true;
        break;
      }
    }
  }
  if (__syncthreads_or(late) != 0) return false;
  // All loads first (one latency for the whole share), then the checks.
  uint4 v[S];
  uint32_t tail[3] = {0, 0, 0};
#pragma unroll
  for (int m = 0; m < S; ++m) {
    const uint32_t j = unit_of(tid, m);
    const uint8_t* src = p.my_inbox + kFlagLineBytes + static_cast<size_t>(j) * kUnitBytes;
    v[m] = make_uint4(0, 0, 0, 0);
    if (j < p.full_units) {
      v[m] = ptx::ld_relaxed_sys_v4_u32(src);
    } else if (j == p.full_units) {
#pragma unroll
      for (int i = 0; i < 3; ++i)
        if (static_cast<uint32_t>(i) < p.tail_words) tail[i] = ptx::ld_relaxed_sys_u32(src + 4 * i);
    }
  }
  bool bad = false;
#pragma unroll
  for (int m = 0; m < S; ++m) {
    const uint32_t j = unit_of(tid, m);
    if (j < p.full_units) {
      bad |= (v[m].x != word(j, 0)) | (v[m].y != word(j, 1)) | (v[m].z != word(j, 2)) | (v[m].w != word(j, 3));
    } else if (j == p.full_units) {
#pragma unroll
      for (int i = 0; i < 3; ++i)
        if (static_cast<uint32_t>(i) < p.tail_words) bad |= tail[i] != word(j, i);
    }
  }
  // Counted by thread 0 after the next barrier (the one in the following send).
  if (bad) *bad_slot = 1;
  return true;
}

template <bool kFlagInData, int S>
__device__ __forceinline__ bool receive_message(const PingPongParams& p, uint32_t seq, uint32_t x,
                                                uint32_t* bad_slot) {
  if constexpr (kFlagInData) {
    return receive_flag_in_data<S>(p, seq, x, bad_slot);
  } else {
    return receive_payload_then_flag<S>(p, seq, x, bad_slot);
  }
}

// Thread 0's bookkeeping lives in shared memory, not in registers: the poll loop of the
// largest flag_in_data payloads needs all 64 registers a thread of a 1024-thread block has.
struct RoundBook {
  uint32_t bad_flag[2];           // round k & 1: some thread saw a wrong byte in round k
  unsigned long long bad;         // rounds counted bad
  unsigned long long first_bad;
  unsigned long long t_begin;     // initiator: before the first send; responder: kernel start
};

// Thread 0 counts round k as bad if any thread flagged it. Slot k & 1 is next written in
// round k + 2, after a barrier that thread 0 reaches only after this reset.
__device__ __forceinline__ void tally_round(RoundBook& book, uint32_t k) {
  if (threadIdx.x != 0) return;
  if (book.bad_flag[k & 1] != 0) {
    ++book.bad;
    book.first_bad = min(book.first_bad, static_cast<unsigned long long>(k));
    book.bad_flag[k & 1] = 0;
  }
}

// One block per side. __launch_bounds__(1024, 1): up to 64 registers per thread, for the up
// to 8 units x 16 bytes of one poll pass that a thread keeps in flight.
template <SignalProtocol P, int S>
__global__ void __launch_bounds__(kMaxBlock, 1) ping_pong_kernel(const PingPongParams p) {
  constexpr bool kFlagInData = P == SignalProtocol::kFlagInData;
  __shared__ RoundBook book;
  const uint32_t tid = threadIdx.x;
  if (tid == 0) {
    book.bad_flag[0] = book.bad_flag[1] = 0;
    book.bad = 0;
    book.first_bad = ~0ull;
    book.t_begin = ptx::globaltimer_ns();
  }
  __syncthreads();
  if (tid == 0 && p.initiator != 0) book.t_begin = ptx::globaltimer_ns();

  const uint32_t send_mask = p.initiator != 0 ? 0u : ~0u;  // the responder sends complements
  const uint32_t recv_mask = ~send_mask;
  bool timed_out = false;
  uint32_t k = 0;  // after the loop: the rounds completed
  for (; k < p.rounds; ++k) {
    const uint32_t seq = p.seq_base + k + 1;
    const uint32_t g = seq_hash(p.seq_key, seq);
    if (p.initiator != 0) {
      send_any<P, S>(p, seq, g ^ send_mask);
      if (k > 0) tally_round(book, k - 1);  // after the send: off the critical path
    }
    if (!receive_message<kFlagInData, S>(p, seq, g ^ recv_mask, &book.bad_flag[k & 1])) {
      timed_out = true;
      break;
    }
    if (p.initiator == 0) {
      send_any<P, S>(p, seq, g ^ send_mask);
      tally_round(book, k);
    }
  }
  // Every thread leaves the loop in the same round (the timeout decision is block-wide).
  // The barrier ends the last round: payload_then_flag readers are done, their flags set.
  __syncthreads();
  const uint64_t t_end = ptx::globaltimer_ns();
  if (p.initiator != 0 && !timed_out && k > 0) tally_round(book, k - 1);

  if (tid == 0) {
    PingPongResult* r = p.result;
    r->elapsed_ns = t_end - book.t_begin;
    r->round_trips_done = k;
    r->bad_payloads = book.bad;
    r->first_bad_round = book.first_bad;
    r->timed_out = timed_out ? 1u : 0u;
    r->threads = blockDim.x;
  }
}

using PingPongKernel = void (*)(PingPongParams);

template <SignalProtocol P>
PingPongKernel kernel_with(uint32_t per_thread) {
  switch (per_thread) {
    case 1: return ping_pong_kernel<P, 1>;
    case 2: return ping_pong_kernel<P, 2>;
    case 4: return ping_pong_kernel<P, 4>;
    case 8:  // only flag_in_data's 8-byte units need 8 per thread at 64 KiB
      if constexpr (P == SignalProtocol::kFlagInData) return ping_pong_kernel<P, 8>;
      return nullptr;
    default: return nullptr;
  }
}

PingPongKernel ping_pong_kernel_for(SignalProtocol protocol, uint32_t per_thread) {
  switch (protocol) {
    case SignalProtocol::kFlagInData: return kernel_with<SignalProtocol::kFlagInData>(per_thread);
    case SignalProtocol::kPayloadThenFlag: return kernel_with<SignalProtocol::kPayloadThenFlag>(per_thread);
    case SignalProtocol::kTmaThenFlag: return kernel_with<SignalProtocol::kTmaThenFlag>(per_thread);
    case SignalProtocol::kCeThenFlag: return nullptr;  // no kernel in the loop: ce_ping_pong.cu
  }
  return nullptr;
}

PingPongLayout layout_of(size_t payload_bytes, SignalProtocol protocol) {
  return ping_pong_layout(payload_bytes, protocol == SignalProtocol::kFlagInData);
}

std::string payload_reason(size_t payload_bytes) {
  if (payload_bytes < 4 || payload_bytes > kPingPongMaxPayload || payload_bytes % 4 != 0)
    return "ping-pong payload must be a multiple of 4 bytes in 4 .. " + std::to_string(kPingPongMaxPayload) +
           " (got " + std::to_string(payload_bytes) + ")";
  return {};
}

}  // namespace

// ----- ping-pong host API -----

std::optional<std::string> ping_pong_unsupported_reason(const PingPongArgs& a) {
  if (auto why = payload_reason(a.payload_bytes); !why.empty()) return why;
  if (a.round_trips == 0) return std::string("ping-pong round_trips must be at least 1");
  // seq = epoch * round_trips + k + 1 must fit 32 bits without wrapping onto an earlier one.
  const uint64_t last_seq = (static_cast<uint64_t>(a.epoch) + 1) * a.round_trips;
  if (last_seq > 0xffffffffull)
    return "ping-pong sequence numbers would wrap: (epoch + 1) * round_trips = " + std::to_string(last_seq) +
           " > 2^32 - 1; reset the inboxes and restart at epoch 0";
  if (a.my_inbox == nullptr || a.peer_inbox == nullptr || a.result == nullptr)
    return std::string("ping-pong needs my_inbox, peer_inbox and result");
  if (reinterpret_cast<uintptr_t>(a.my_inbox) % kUnitBytes != 0 ||
      reinterpret_cast<uintptr_t>(a.peer_inbox) % kUnitBytes != 0)
    return std::string("ping-pong inboxes must be 16-byte aligned");
  if (a.timeout_ns == 0) return std::string("ping-pong timeout_ns must be positive");
  if (a.protocol == SignalProtocol::kTmaThenFlag) {
    if (a.payload_bytes % kUnitBytes != 0)
      return "tma_then_flag moves whole 16-byte units: a payload of " + std::to_string(a.payload_bytes) +
             " bytes is not a multiple of 16";
    if (auto why = requires_hopper(detail::current_device(), "tma_then_flag (TMA bulk copies)")) return why;
  }
  if (a.protocol == SignalProtocol::kCeThenFlag) return ce_ping_pong_unsupported_reason(a);
  return std::nullopt;
}

size_t ping_pong_inbox_bytes(size_t payload_bytes, SignalProtocol protocol) {
  if (protocol == SignalProtocol::kCeThenFlag) return ce_ping_pong_inbox_bytes(payload_bytes);
  const PingPongLayout l = layout_of(payload_bytes, protocol);
  return (protocol == SignalProtocol::kFlagInData ? 0 : kFlagLineBytes) + static_cast<size_t>(l.units) * kUnitBytes;
}

size_t ping_pong_messages_bytes(size_t payload_bytes, SignalProtocol protocol) {
  return protocol == SignalProtocol::kCeThenFlag ? ce_ping_pong_messages_bytes(payload_bytes) : 0;
}

int ping_pong_threads(size_t payload_bytes, SignalProtocol protocol) {
  if (protocol == SignalProtocol::kCeThenFlag) return ce_ping_pong_check_threads();
  return static_cast<int>(layout_of(payload_bytes, protocol).threads);
}

void ping_pong_reset_inbox(void* inbox, size_t bytes, cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(inbox, 0, bytes, stream), "zeroing a ping-pong inbox");
}

void ping_pong_prepare(size_t payload_bytes, SignalProtocol protocol) {
  if (auto why = payload_reason(payload_bytes); !why.empty()) throw InputError(why);
  if (protocol == SignalProtocol::kCeThenFlag) return ce_ping_pong_prepare();
  const PingPongLayout l = layout_of(payload_bytes, protocol);
  const auto kernel = ping_pong_kernel_for(protocol, l.per_thread);
  if (protocol == SignalProtocol::kTmaThenFlag)
    cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(payload_bytes)),
               "allowing tma_then_flag's shared memory");
  cudaFuncAttributes attrs{};
  cuda_check(cudaFuncGetAttributes(&attrs, kernel), "loading the ping-pong kernel");
}

void enqueue_ping_pong_messages(const PingPongArgs& a, cudaStream_t stream) {
  if (a.protocol != SignalProtocol::kCeThenFlag) return;
  if (auto why = ping_pong_unsupported_reason(a)) throw InputError(*why);
  enqueue_ce_messages(a, stream);
}

void enqueue_ping_pong(const PingPongArgs& a, cudaStream_t stream) {
  if (auto why = ping_pong_unsupported_reason(a)) throw InputError(*why);
  if (a.protocol == SignalProtocol::kCeThenFlag) return enqueue_ce_ping_pong(a, stream);
  const PingPongLayout l = layout_of(a.payload_bytes, a.protocol);
  PingPongParams p{};
  p.my_inbox = static_cast<uint8_t*>(a.my_inbox);
  p.peer_inbox = static_cast<uint8_t*>(a.peer_inbox);
  p.result = a.result;
  p.timeout_ns = a.timeout_ns;
  p.heartbeat = a.heartbeat;
  p.full_units = l.full_units;
  p.tail_words = l.tail_words;
  p.rounds = a.round_trips;
  p.seq_base = a.epoch * a.round_trips;  // checked above: no wrap
  p.word_key = ping_pong::word_key(a.seed);
  p.seq_key = ping_pong::seq_key(a.seed);
  p.initiator = a.initiator ? 1u : 0u;
  const size_t smem = a.protocol == SignalProtocol::kTmaThenFlag ? a.payload_bytes : 0;
  ping_pong_kernel_for(a.protocol, l.per_thread)<<<1, l.threads, smem, stream>>>(p);
  cuda_check_launch(std::string("the ping-pong kernel (") + (a.initiator ? "initiator" : "responder") + ", " +
                    signal_protocol_name(a.protocol) + ", " + std::to_string(a.payload_bytes) + " bytes)");
}

}  // namespace p2pbench::kernels
