// The put_signal kernels (the protocol: put_signal_protocol.hpp): the LD/ST and TMA senders, the
// receiver every engine shares, and the reset of a flow's signal region.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "methods/put_signal/put_signal_protocol.hpp"

namespace p2pbench::put_signal {

// One end's view of a flow for one launch.
struct Side {
  Geometry g;
  const void* src = nullptr;  // sender: its source; receiver: unused
  void* dst = nullptr;        // sender: the receiver's buffer (peer mapping); receiver: its own
  uint32_t* ready = nullptr;  // the receiver's ready words (the sender reaches them through the mapping)
  uint32_t* busy = nullptr;   // the sender's credit words (the receiver reaches them through the mapping)
  RegionHeader* header = nullptr;  // this end's own header
  uint64_t timeout_ns = 0;
  const uint64_t* heartbeat = nullptr;  // common/host_heartbeat.hpp; null: raw time
  // Device array: chunk k is the source's chunk gather[k] (the tokens' dispatch: a rank's tokens
  // for one destination); null: chunk k is the source's chunk k. The receiver's spot check reads it too.
  const uint32_t* gather = nullptr;
  bool bf16_tokens = false;  // the source holds token_word data (kernels/pattern_device.cuh), not pattern_word
};

// How the signal is ordered after the data. The benchmark runs kReleaseAcquire; the others are
// the ordering test's: a signal stored relaxed (no release), or waited for relaxed (no acquire).
enum class Ordering { kReleaseAcquire, kNoRelease, kNoAcquire };

// Zeroes a signal region and records the seed of the pattern the flow's source holds.
void reset_region(void* region, uint64_t seed, cudaStream_t stream);

// The LD/ST sender: one channel per warp (blocks x threads / 32), each chunk copied by its warp
// with 16-byte streaming loads and stores, then signalled by lane 0.
std::optional<std::string> ldst_unsupported_reason(int blocks, int threads, int device);
void ldst_prepare(int device);
void ldst_send(const Side& s, int blocks, int threads, Ordering o, cudaStream_t stream);

// The TMA sender: one channel per warp, whose lane 0 moves each chunk global -> shared -> peer
// with bulk copies through two stages of smem_bytes / warps / 2 bytes and signals it once its
// stores are complete, a wait that overlaps the next chunk's stores.
std::optional<std::string> tma_unsupported_reason(int blocks, int threads, uint64_t smem_bytes, int device);
void tma_prepare(int threads, uint64_t smem_bytes, int device);
void tma_send(const Side& s, int blocks, int threads, uint64_t smem_bytes, Ordering o, cudaStream_t stream);

// How the copy-engine sender signals. The protocol's chunk is what one signal covers; the sender
// may move it as several copies (`copy_bytes` each: a group of puts behind one signal and one
// credit), and may set the signal and take the credit with 4-byte copies of a device word on the
// copy engine instead of the driver's stream memory writes (kernels/stream_value_ops.hpp). The
// copies of a chunk may go as one cudaMemcpyBatchAsync: separate copies to a peer cost about 2.4 us
// each beside their bytes, a batch of 16 about 0.3 us per copy (two H200,
// tools/probes/ce_signal_probe.cpp). No CUDA graph can hold a batch.
struct CeSignals {
  uint32_t copy_bytes = 0;  // 0: one copy per chunk
  bool by_copy = false;
  bool batched = false;
};

// The copy-engine sender (one channel): per chunk a stream wait until the credit is free, the
// chunk's copies (cudaMemcpyAsync, or one cudaMemcpyBatchAsync), then the credit taken and the
// signal: two stream writes in one cuStreamBatchMemOp (the default flags: a memory barrier orders
// the copies before them), or, with kNoRelease (CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER on the
// signal) or 4-byte copies on the same stream, the take before the copies and the signal after. No SM. Each of the channel's in_flight credit slots has a stream of its own, forked
// from and joined to the caller's: one stream runs its operations per chunk one after another
// (about 10 us on an H200 pair with writes), so the slots' chunks overlap only on separate streams.
class CopyEngineSender {
 public:
  CopyEngineSender();  // throws DriverFailure where the driver lacks the stream operations
  void send(const Side& s, Ordering o, CeSignals how, cudaStream_t stream);
  // The commands one transfer queues (a wait, a take, the copies and a signal per chunk). A batch
  // of copies takes a place in the launch queue per copy: 63 batches of 16 copies and 15 of 64
  // fill one stream's 1020 places behind a closed gate (an H200, tools/probes/queue_depth_probe.cpp).
  static uint64_t commands(const Geometry& g, CeSignals how);

 private:
  // Chunks first, first + step, ... of the transfer, on one stream.
  void send_chunks(const Side& s, Ordering o, CeSignals how, cudaStream_t stream, uint64_t first, uint64_t step) const;
  static void set_word(const Side& s, uint32_t* word, bool by_copy, unsigned write_flags, cudaStream_t stream,
                       const char* what);
  // The `length` bytes at `start` of the source to the receiver's buffer, in copies of `piece`
  // bytes, one call each or one batch.
  static void copy_chunk(const Side& s, uint64_t start, uint64_t length, uint64_t piece, bool batched,
                         cudaStream_t stream);
  void ensure_forks(size_t count);

  std::vector<Stream> forks_;
  std::vector<Event> joins_;
  Event fork_;
};

// The receiver: one thread per channel.
void receive(const Side& s, Ordering o, cudaStream_t stream);
// Blocks the receiver takes for `channels` (its SMs, at most).
int receiver_blocks(uint32_t channels);

}  // namespace p2pbench::put_signal
