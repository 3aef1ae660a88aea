// Put with signal, as NVSHMEM's put_signal and DeepEP's intra-node channels do it: a transfer of
// `bytes` is cut into chunks, and each chunk is a put into the receiver's buffer followed by a
// signal the receiver waits on.
//
//   sender, channel c, its j-th chunk k (k = c + j x channels), slot s = c x in_flight + j mod in_flight:
//     wait until busy[s] == 0, then set it to 1                        (take the slot's credit)
//     put chunk k at offset k x chunk_bytes of the receiver's buffer
//     signal: ready[s] = 1 in the receiver's memory (release, system scope)
//   receiver, one thread per channel, the same chunks:
//     wait until ready[s] == 1 (acquire, system scope)
//     check the chunk's first and last 16 bytes against the pattern of the sample's seed
//     ready[s] = 0, then busy[s] = 0 in the sender's memory (release): the credit comes back
//
// So a channel has at most `in_flight` chunks put and not yet consumed, and a transfer may have
// any number of chunks: a slot's words are used again only after both went back to zero. Every launch leaves every
// word as it found it (zero), so a CUDA graph replays it unchanged. Where the words live: the
// flow's signal regions (common/signal_area.hpp), the receiver's holding `ready`, the sender's
// `busy`, each starting with a RegionHeader its own end's kernels write. A wait that times out
// marks its header, and the receiver then clears every credit of its channel, so no sender (a
// copy-engine stream waiting on a credit has no timeout of its own) is left waiting.
// The receiver's spot check is what shows an ordering fault (a signal seen before its data); the
// case loop still checks every byte of the buffer after each sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/signal_area.hpp"

#if defined(__CUDACC__)
#define P2PBENCH_HOST_DEVICE __host__ __device__
#else
#define P2PBENCH_HOST_DEVICE
#endif

namespace p2pbench::put_signal {

constexpr uint32_t kMaxCreditSlots = 16384;  // ready and busy words: channels x in_flight
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kReadyOffset = kHeaderBytes;
constexpr size_t kBusyOffset = kReadyOffset + size_t(kMaxCreditSlots) * sizeof(uint32_t);
static_assert(kBusyOffset + size_t(kMaxCreditSlots) * sizeof(uint32_t) <= kSignalRegionBytes,
              "the put_signal words must fit in one signal region");
// Bulk copies and the receiver's 16-byte spot checks work in 16-byte units.
constexpr uint32_t kAlignment = 16;

// What one end's kernels report about the last launch, at the start of its own region.
struct RegionHeader {
  uint64_t seed;             // the pattern the flow's source holds (set before each sample)
  uint32_t bad_chunks;       // receiver: chunks whose first or last 16 bytes were wrong after their signal
  uint32_t first_bad_chunk;  // receiver: the lowest such chunk + 1 (0: none)
  uint32_t timed_out;        // 0, or which wait gave up: 1 a signal (receiver), 2 a credit (sender)
  uint32_t stuck_chunk;      // the chunk it waited for
  uint32_t one;              // 1: the word a copy-engine sender copies for a signal or a credit it takes as a copy
};

enum Wait : uint32_t { kWaitedForSignal = 1, kWaitedForCredit = 2 };

struct Geometry {
  uint64_t bytes = 0;
  uint32_t chunk_bytes = 0;
  uint32_t channels = 1;
  uint32_t in_flight = 1;

  P2PBENCH_HOST_DEVICE uint64_t chunks() const { return (bytes + chunk_bytes - 1) / chunk_bytes; }
  // Chunk k starts at k x chunk_bytes; the last one may be shorter.
  P2PBENCH_HOST_DEVICE uint32_t length_of(uint64_t chunk) const {
    const uint64_t left = bytes - chunk * chunk_bytes;
    return uint32_t(left < chunk_bytes ? left : chunk_bytes);
  }
  P2PBENCH_HOST_DEVICE uint32_t credit_slot(uint64_t chunk) const {
    const uint64_t channel = chunk % channels, nth = chunk / channels;
    return uint32_t(channel * in_flight + nth % in_flight);
  }

  // Why the protocol cannot carry this transfer, or nullopt (a sender's own bounds: its engine).
  std::optional<std::string> unsupported_reason() const {
    if (chunk_bytes == 0 || chunk_bytes % kAlignment != 0)
      return "chunk_bytes must be a positive multiple of 16 (got " + std::to_string(chunk_bytes) + ")";
    if (bytes == 0 || bytes % kAlignment != 0)
      return "put_signal moves whole 16-byte units: " + std::to_string(bytes) + " bytes is not a multiple of 16";
    if (channels == 0 || in_flight == 0 || uint64_t(channels) * in_flight > kMaxCreditSlots)
      return std::to_string(channels) + " channels x " + std::to_string(in_flight) +
             " chunks in flight exceed the " + std::to_string(kMaxCreditSlots) + " credits of a signal region";
    return std::nullopt;
  }
};

}  // namespace p2pbench::put_signal
