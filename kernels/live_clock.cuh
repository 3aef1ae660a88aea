// The time a GPU-side wait has spent while its host process was alive. A kernel that spins on a
// flag written elsewhere gives up after a timeout; counting raw %globaltimer time would spend
// that timeout during a whole-job pause (every rank stopped, the GPU still running), and the
// resumed job would fail. The host advances a heartbeat counter every few milliseconds
// (common/host_heartbeat.hpp); time counts only while the counter has moved recently, so a pause
// costs a wait at most kStaleNs. Without a heartbeat (nullptr) every nanosecond counts.
#pragma once

#include <cstdint>

#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

class LiveClock {
 public:
  // The host's liveness is judged at checkpoints this far apart; between them a poll costs one
  // timer read and a subtraction, as a raw %globaltimer deadline would. The heartbeat is host
  // memory, a PCIe round trip away, so the first read comes only at the first checkpoint: the
  // short waits of a latency probe (a ping-pong's every round trip, every thread of its block)
  // never reach it. A read there per round trip cost microseconds per one-way figure.
  static constexpr uint64_t kCheckEveryNs = 1'000'000;
  // A heartbeat unchanged for this long means the host is stopped (it beats every 5 ms).
  static constexpr uint64_t kStaleNs = 200'000'000;

  __device__ explicit LiveClock(const uint64_t* heartbeat) : heartbeat_(heartbeat) {
    checked_ns_ = moved_ns_ = ptx::globaltimer_ns();
  }

  // Nanoseconds counted so far; call it while polling (on every poll or every few). Time since
  // the last checkpoint counts when the host was alive at it.
  __device__ uint64_t waited_ns() {
    const uint64_t since = ptx::globaltimer_ns() - checked_ns_;
    if (since < kCheckEveryNs) return alive_ ? counted_ns_ + since : counted_ns_;
    checkpoint(checked_ns_ + since);
    return counted_ns_;
  }

 private:
  // Inline on purpose: out of line, its `this` put the clock's state in local memory, stored at
  // every wait's start and loaded on every poll.
  __device__ void checkpoint(uint64_t now) {
    if (alive_) counted_ns_ += now - checked_ns_;
    checked_ns_ = now;
    if (!heartbeat_) return;
    const uint64_t beat = ptx::ld_relaxed_sys_u64(heartbeat_);
    if (!read_once_ || beat != beat_) {  // the first read starts the comparison
      read_once_ = true;
      beat_ = beat;
      moved_ns_ = now;
    }
    alive_ = now - moved_ns_ <= kStaleNs;
  }

  const uint64_t* heartbeat_;
  bool read_once_ = false;
  bool alive_ = true;
  uint64_t beat_ = 0;
  uint64_t checked_ns_ = 0;
  uint64_t moved_ns_ = 0;
  uint64_t counted_ns_ = 0;
};

}  // namespace p2pbench::kernels
