// ce_then_flag: the ping-pong with the copy engine putting each message and stream memory
// operations writing and waiting for the flags, so no SM is in the loop (the zero-SM path of
// put_signal_ce). Layout of an inbox: the flag's line (the flag at 0, the watchdog's state at
// kStateOffset, this side's only), then round k's message in slot k.
#include <cuda.h>  // types only: the stream memory operations are fetched at run time
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "kernels/ce_ping_pong.hpp"
#include "kernels/live_clock.cuh"
#include "kernels/ping_pong_words.cuh"
#include "kernels/ptx.cuh"
#include "kernels/stream_value_ops.hpp"

namespace p2pbench::kernels {
namespace {

using ping_pong::kFlagLineBytes;

constexpr uint32_t kStateOffset = 64;  // in the flag line, never written by the peer
constexpr uint32_t kRunning = 0, kFinished = 1, kGaveUp = 2;
constexpr int kCheckThreads = 1024;
constexpr unsigned kWatchdogSleepNs = 2000;

size_t slot_bytes(size_t payload_bytes) { return (payload_bytes + 15) / 16 * 16; }

uint32_t* flag_of(void* inbox) { return static_cast<uint32_t*>(inbox); }
uint32_t* state_of(void* inbox) { return reinterpret_cast<uint32_t*>(static_cast<char*>(inbox) + kStateOffset); }

// The messages this side sends in a launch: round k's in slot k.
__global__ void fill_messages(uint32_t* messages, uint32_t words, uint32_t slot_words, uint32_t rounds,
                              uint32_t seq_base, uint32_t word_k, uint32_t seq_k, bool initiator) {
  for (uint32_t k = blockIdx.x; k < rounds; k += gridDim.x) {
    const uint32_t mask = ping_pong::message_mask(seq_k, seq_base + k + 1, initiator);
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x)
      messages[size_t(k) * slot_words + w] = ping_pong::word_hash(word_k, w) ^ mask;
  }
}

// The clock starts (after the gate): the watchdog's state is reset to running.
__global__ void stamp_begin(uint32_t* state, unsigned long long* t0) {
  *state = kRunning;
  __threadfence();
  *t0 = ptx::globaltimer_ns();
}

// The last round is in: the clock stops, unless the watchdog already gave up.
__global__ void stamp_end(uint32_t* state, const unsigned long long* t0, PingPongResult* r, uint32_t rounds) {
  const unsigned long long now = ptx::globaltimer_ns();
  const bool finished = atomicCAS(state, kRunning, kFinished) == kRunning;
  r->elapsed_ns = now - *t0;
  r->round_trips_done = finished ? rounds : 0;
  r->timed_out = finished ? 0u : 1u;
}

// Gives up after timeout_ns of a run that has not finished: releases every wait of this side's
// stream, so the stream drains, by setting its flag to the launch's last sequence number (a
// stream wait's >= is cyclic, (int32_t)(flag - seq) >= 0, so no larger value would do); the
// peer's watchdog does the same.
__global__ void watchdog(uint32_t* state, uint32_t* flag, uint32_t last_seq, uint64_t timeout_ns,
                         const uint64_t* heartbeat) {
  LiveClock clock(heartbeat);
  while (ptx::ld_relaxed_sys_u32(state) == kRunning) {
    if (clock.waited_ns() > timeout_ns) {
      if (atomicCAS(state, kRunning, kGaveUp) == kRunning) ptx::st_release_sys(flag, last_seq);
      return;
    }
    __nanosleep(kWatchdogSleepNs);
  }
}

// Every word of every round's slot against the message the peer sent.
__global__ void check_slots(const uint32_t* inbox_slots, uint32_t words, uint32_t slot_words, uint32_t rounds,
                            uint32_t seq_base, uint32_t word_k, uint32_t seq_k, bool from_initiator, PingPongResult* r) {
  unsigned long long bad = 0, first_bad = ~0ull;
  for (uint32_t k = 0; k < rounds; ++k) {
    const uint32_t mask = ping_pong::message_mask(seq_k, seq_base + k + 1, from_initiator);
    bool wrong = false;
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x)
      wrong |= inbox_slots[size_t(k) * slot_words + w] != (ping_pong::word_hash(word_k, w) ^ mask);
    if (__syncthreads_or(wrong) && threadIdx.x == 0) {
      ++bad;
      if (first_bad == ~0ull) first_bad = k;
    }
  }
  if (threadIdx.x == 0) {
    r->bad_payloads = bad;
    r->first_bad_round = first_bad;
    r->threads = blockDim.x;
  }
}

// Round k on this side's stream: the initiator puts, signals and waits; the responder waits,
// puts and signals. A put is message k into slot k of the peer's inbox.
void enqueue_round(const PingPongArgs& a, uint32_t k, cudaStream_t stream) {
  const uint32_t seq = a.epoch * a.round_trips + k + 1;
  const size_t slot = slot_bytes(a.payload_bytes);
  auto wait = [&] {
    stream_wait_value(stream, flag_of(a.my_inbox), seq, CU_STREAM_WAIT_VALUE_GEQ, "queueing a ce_then_flag wait");
  };
  if (!a.initiator) wait();
  cuda_check(cudaMemcpyAsync(static_cast<char*>(a.peer_inbox) + kFlagLineBytes + k * slot,
                             static_cast<const char*>(a.messages) + k * slot, a.payload_bytes, cudaMemcpyDeviceToDevice, stream),
             "queueing a ce_then_flag put");
  stream_write_value(stream, flag_of(a.peer_inbox), seq, CU_STREAM_WRITE_VALUE_DEFAULT, "queueing a ce_then_flag signal");
  if (a.initiator) wait();
}

}  // namespace

std::optional<std::string> ce_ping_pong_unsupported_reason(const PingPongArgs& a) {
  if (a.round_trips > kCePingPongMaxRounds)
    return "ce_then_flag runs at most " + std::to_string(kCePingPongMaxRounds) + " round trips a launch (got " +
           std::to_string(a.round_trips) + ")";
  return std::nullopt;
}

size_t ce_ping_pong_inbox_bytes(size_t payload_bytes) { return kFlagLineBytes + kCePingPongMaxRounds * slot_bytes(payload_bytes); }
size_t ce_ping_pong_messages_bytes(size_t payload_bytes) { return kCePingPongMaxRounds * slot_bytes(payload_bytes); }
int ce_ping_pong_check_threads() { return kCheckThreads; }

void ce_ping_pong_prepare() {
  require_stream_value_ops();
  for (const void* kernel : {reinterpret_cast<const void*>(fill_messages), reinterpret_cast<const void*>(stamp_begin),
                             reinterpret_cast<const void*>(stamp_end), reinterpret_cast<const void*>(watchdog),
                             reinterpret_cast<const void*>(check_slots)}) {
    cudaFuncAttributes attrs{};
    cuda_check(cudaFuncGetAttributes(&attrs, kernel), "loading the ce_then_flag kernels");
  }
}

void require_buffers(const PingPongArgs& a) {
  if (a.messages == nullptr || a.watchdog_stream == nullptr)
    throw std::logic_error("ce_then_flag needs its message buffer and a watchdog stream");
}

void enqueue_ce_messages(const PingPongArgs& a, cudaStream_t stream) {
  require_buffers(a);
  const uint32_t words = uint32_t(a.payload_bytes / 4), slot_words = uint32_t(slot_bytes(a.payload_bytes) / 4);
  fill_messages<<<a.round_trips, 256, 0, stream>>>(static_cast<uint32_t*>(a.messages), words, slot_words, a.round_trips,
                                                   a.epoch * a.round_trips, ping_pong::word_key(a.seed),
                                                   ping_pong::seq_key(a.seed), a.initiator);
  cuda_check_launch("writing the ce_then_flag messages");
}

void enqueue_ce_ping_pong(const PingPongArgs& a, cudaStream_t stream) {
  require_buffers(a);
  uint32_t* state = state_of(a.my_inbox);
  auto* t0 = reinterpret_cast<unsigned long long*>(static_cast<char*>(a.my_inbox) + kStateOffset + 8);
  stamp_begin<<<1, 1, 0, stream>>>(state, t0);
  cuda_check_launch("the ce_then_flag start stamp");
  // The watchdog starts with the clock, after the gate: its timeout counts from there.
  Event started = make_untimed_event("ordering the ce_then_flag watchdog");
  cuda_check(cudaEventRecord(started.get(), stream), "recording the ce_then_flag start");
  cuda_check(cudaStreamWaitEvent(a.watchdog_stream, started.get(), 0), "ordering the ce_then_flag watchdog");
  watchdog<<<1, 1, 0, a.watchdog_stream>>>(state, flag_of(a.my_inbox), (a.epoch + 1) * a.round_trips, a.timeout_ns,
                                           a.heartbeat);
  cuda_check_launch("the ce_then_flag watchdog");
  for (uint32_t k = 0; k < a.round_trips; ++k) enqueue_round(a, k, stream);
  stamp_end<<<1, 1, 0, stream>>>(state, t0, a.result, a.round_trips);
  cuda_check_launch("the ce_then_flag end stamp");
  const uint32_t words = uint32_t(a.payload_bytes / 4), slot_words = uint32_t(slot_bytes(a.payload_bytes) / 4);
  check_slots<<<1, kCheckThreads, 0, stream>>>(
      reinterpret_cast<const uint32_t*>(static_cast<const char*>(a.my_inbox) + kFlagLineBytes), words, slot_words,
      a.round_trips, a.epoch * a.round_trips, ping_pong::word_key(a.seed), ping_pong::seq_key(a.seed), !a.initiator,
      a.result);
  cuda_check_launch("checking the ce_then_flag messages");
}

}  // namespace p2pbench::kernels
