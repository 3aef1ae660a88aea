// Latency kernels: ping-pong signal latency between two GPUs, and pointer-chase read latency
// through peer memory. Plain C++ host API: no device code, no MPI.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace p2pbench::kernels {

// ===== latency_signal: ping-pong =========================================================
//
// Each side runs one block. Message k goes initiator -> responder inbox, answer k goes
// responder -> initiator inbox; each side writes into the PEER's inbox and polls its OWN
// (local) one. The initiator stamps %globaltimer before its first send and after its last
// receipt: one-way latency = elapsed_ns / round_trips_done / 2.
//
// Sequence numbers: message k of a launch carries seq = epoch * round_trips + k + 1 (32-bit;
// 0 is never sent, so a zeroed inbox never matches). Inboxes are reset (zeroed) ONCE after
// allocation; consecutive launches then need no reset as long as the runner passes
// epoch = 0, 1, 2, ... with the SAME round_trips (so the seq ranges never overlap). When
// round_trips changes, or a launch timed out (the peer may still be writing), quiesce both
// sides, reset both inboxes and restart at epoch 0.
//
// Payload word w (4 bytes at payload offset 4w) of message seq s is (w * odd + key(seed)) XOR
// a 32-bit mix of (seed, s); both parts are bijective, so every word of a stale message
// (other s), a word moved to another offset (other w), or a torn 8-byte word differs. Answers
// carry the bitwise complement, so a message that lands in the sender's own inbox (swapped
// pointers) never passes. The receiver compares every 4-byte word of every message.
//
// Protocols (the whole message is received before the answer is sent, in each):
//  flag_in_data: the payload travels as 8-byte words {4 data bytes, 4 bytes seq}, stored as
//    st.relaxed.sys.v2.u64 (16 bytes: 8 payload bytes per store); no flag, no fence. The
//    receiver polls all its words with ld.relaxed.sys until every one carries the expected
//    seq; the wire carries twice the payload. Inbox: ceil(payload/4) * 8 bytes, rounded to 16.
//  payload_then_flag: plain 16-byte stores of the payload, __syncthreads, then one thread's
//    st.release.sys of a separate 32-bit flag = seq; the receiver's thread 0 polls the flag
//    with ld.acquire.sys, __syncthreads, then every thread reads its share (ld.relaxed.sys).
//    Inbox: 128 bytes (the flag's own line) + payload rounded to 16.
//  tma_then_flag: as payload_then_flag, but the block writes the message into its shared memory
//    and one thread puts it with one bulk copy (cp.async.bulk, the TMA unit), waits for the
//    copy's writes to complete, then releases the flag: put + signal as put_signal_tma does it.
//    Payloads in multiples of 16 bytes (a bulk copy's unit). Same inbox as payload_then_flag.
//  ce_then_flag: the copy engine, no SM in the loop (put_signal_ce's path): per round the
//    initiator's stream copies message k (cudaMemcpyAsync from a buffer filled before the gate)
//    into slot k of the peer's inbox, writes the flag (cuStreamWriteValue32, with its memory
//    barrier) and waits for the answer's flag (cuStreamWaitValue32, >= seq); the responder's
//    stream waits, copies answer k, writes the flag. One-kernel stamps of %globaltimer before the
//    first round and after the last time it; every slot is checked after the launch. At most
//    kCePingPongMaxRounds rounds a launch (the stream's queue holds them behind the gate), and
//    a watchdog kernel on `watchdog_stream` gives up after the timeout: it sets the own flag to
//    the launch's last sequence number, so every wait still queued passes, and the result says
//    timed_out.
// Cooperation: one block of 32..1024 threads (threads = payload units rounded up to a warp;
// a unit is 16 bytes of stores: 8 payload bytes for flag_in_data, 16 for payload_then_flag),
// each thread up to 8 units. Per round a block has one barrier per receive (flag_in_data) or
// one per receive and one per send (payload_then_flag). Above a few KiB the time is bound by
// what one SM can push over the link, not by the signalling.
//
// Timeout: a thread that sees no complete message for timeout_ns (measured from the start of
// that wait, counted while the host's heartbeat moves: kernels/live_clock.cuh) gives up; the block ends the launch and reports timed_out.
// A launch therefore ends even if the peer never starts.
struct PingPongResult {
  unsigned long long elapsed_ns;        // initiator: first send -> last receipt; responder: start -> last answer
  unsigned long long round_trips_done;  // complete rounds (message received and, by the responder, answered)
  unsigned long long bad_payloads;      // received messages with at least one wrong byte
  unsigned long long first_bad_round;   // lowest round k with a wrong byte, ~0ull if none
  unsigned int timed_out;               // 1 when a wait exceeded timeout_ns
  unsigned int threads;                 // block size that was used (for the record)
};

enum class SignalProtocol { kFlagInData, kPayloadThenFlag, kTmaThenFlag, kCeThenFlag };

// The protocol's name in configs and rows (vocab/variants.cpp lists the same names), and back.
inline const char* signal_protocol_name(SignalProtocol p) {
  switch (p) {
    case SignalProtocol::kFlagInData: return "flag_in_data";
    case SignalProtocol::kPayloadThenFlag: return "payload_then_flag";
    case SignalProtocol::kTmaThenFlag: return "tma_then_flag";
    case SignalProtocol::kCeThenFlag: return "ce_then_flag";
  }
  return "?";
}

inline std::optional<SignalProtocol> signal_protocol_named(const std::string& name) {
  for (SignalProtocol p : {SignalProtocol::kFlagInData, SignalProtocol::kPayloadThenFlag, SignalProtocol::kTmaThenFlag,
                           SignalProtocol::kCeThenFlag})
    if (name == signal_protocol_name(p)) return p;
  return std::nullopt;
}

constexpr uint32_t kCePingPongMaxRounds = 16;

struct PingPongArgs {
  void* my_inbox = nullptr;    // local device memory, polled by this side
  void* peer_inbox = nullptr;  // the peer's inbox (IPC / peer mapping), written by this side
  size_t payload_bytes = 0;    // multiple of 4, 4 .. 64 KiB
  uint32_t round_trips = 0;
  bool initiator = false;
  SignalProtocol protocol = SignalProtocol::kFlagInData;
  uint64_t seed = 0;           // same on both sides
  uint32_t epoch = 0;          // see above: same on both sides, +1 per launch
  uint64_t timeout_ns = 0;     // per wait
  const uint64_t* heartbeat = nullptr;  // common/host_heartbeat.hpp; nullptr: raw %globaltimer time
  PingPongResult* result = nullptr;  // mapped host (or device) memory; written at the end
  // ce_then_flag: the ping-pong's own buffer of messages (kCePingPongMaxRounds x the payload
  // rounded to 16 bytes, device memory), and a second stream for its watchdog.
  void* messages = nullptr;
  cudaStream_t watchdog_stream = nullptr;
};

constexpr size_t kPingPongMaxPayload = size_t{64} << 10;

// Why these arguments cannot run, or nullopt. enqueue_ping_pong throws InputError with it.
std::optional<std::string> ping_pong_unsupported_reason(const PingPongArgs& args);

// Bytes each inbox needs for this payload and protocol (16-byte aligned allocation).
size_t ping_pong_inbox_bytes(size_t payload_bytes, SignalProtocol protocol);

// Bytes of ce_then_flag's message buffer (PingPongArgs::messages); 0 for the other protocols.
size_t ping_pong_messages_bytes(size_t payload_bytes, SignalProtocol protocol);

// Block size the kernel uses for this payload and protocol (ce_then_flag: its check kernel's).
int ping_pong_threads(size_t payload_bytes, SignalProtocol protocol);

// Zeroes an inbox (bytes from ping_pong_inbox_bytes or more). Only while no peer writes to it.
void ping_pong_reset_inbox(void* inbox, size_t bytes, cudaStream_t stream);

// Loads the kernel for this payload/protocol on the current device. Call before the start
// gate: with lazy module loading (the CUDA 12.2+ default) the first launch of a kernel may
// wait for the kernels already running on the device, e.g. the gate's spin kernel.
void ping_pong_prepare(size_t payload_bytes, SignalProtocol protocol);

// ce_then_flag: writes the launch's messages into args.messages. Enqueue it before the start
// gate, off the clock; the other protocols compute their words as they send (a no-op for them).
void enqueue_ping_pong_messages(const PingPongArgs& args, cudaStream_t stream);

// Enqueues one side. Both sides must use the same payload_bytes, protocol, round_trips,
// seed and epoch, and run at the same time (the runner's start gate).
void enqueue_ping_pong(const PingPongArgs& args, cudaStream_t stream);

// ===== latency_read: pointer chase through (peer) memory ================================
//
// A chain of 8-byte OFFSETS (IPC mappings land at different addresses in each process): the
// element at offset i * stride holds ((i + 1) % n) * stride, n = bytes / stride. With 2 MiB
// and 128 bytes this is the cycle nvbandwidth chases (its LatencyNode chain, strideLen 16,
// followed from node 0): 16384 lines visited in order, the whole 2 MiB footprint, far above L1.

enum class ChaseLoad {
  kStrong,    // ld.relaxed.sys.global.u64: never served from L1 (default)
  kWeak,      // ld.global.u64: plain load, as nvbandwidth's ptrChasingKernel (L1 may hit)
  kAbsolute,  // plain global loads (ld.global) of a chain of the reader's own addresses (built
              // with pointer_base): no add per step
  kGeneric,   // as kAbsolute with generic loads (ld, SASS LD): exactly what nvbandwidth's
              // `p = p->next` compiles to
};

struct ChaseResult {
  unsigned long long elapsed_ns;      // %globaltimer around the chase
  unsigned long long loads;
  unsigned long long final_offset;    // must equal expected_chase_end(bytes, stride, loads)
  unsigned long long elapsed_cycles;  // clock64 around the chase (SM cycles), a cross-check
  unsigned int smid;                  // the SM the chasing thread ran on (%smid)
  unsigned int chaser_block;          // its blockIdx.x
};

// Which block of which grid chases. nvbandwidth launches one 1-thread block per SM and lets
// only block `chaser_block` chase (the others return at once), a different block per launch,
// so its figure averages over the SMs; p2pbench's default is a grid of one block.
struct ChaseLaunch {
  unsigned int grid_blocks = 1;   // 1-thread blocks in the grid
  unsigned int chaser_block = 0;  // < grid_blocks
};

std::optional<std::string> chase_unsupported_reason(size_t bytes, size_t stride);

// Writes the chain into buf (local memory or a peer mapping), 8-byte aligned. With
// `pointer_base`, elements hold pointer_base + offset (absolute addresses, valid only in the
// process that built them, for ChaseLoad::kAbsolute) instead of offsets.
void build_chase_chain(void* buf, size_t bytes, size_t stride, cudaStream_t stream, const void* pointer_base = nullptr);

// One thread chases `loads` dependent loads from offset 0 of buf (a peer mapping, or local
// memory) and writes *result (device or mapped host memory). ns per load =
// elapsed_ns / loads; each step also pays one 64-bit add (offset -> address), a few cycles.
// The first launch after mapping also pays TLB misses: discard it as a warm-up.
void enqueue_pointer_chase(const void* buf, size_t bytes, size_t stride, uint64_t loads, ChaseResult* result,
                           cudaStream_t stream, ChaseLoad load = ChaseLoad::kStrong, ChaseLaunch launch = {});

// The offset the chase ends on (host).
uint64_t expected_chase_end(size_t bytes, size_t stride, uint64_t loads);

}  // namespace p2pbench::kernels
