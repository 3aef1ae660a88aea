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
  // The heartbeat is read at most this often: it is host memory, a PCIe round trip away.
  static constexpr uint64_t kCheckEveryNs = 1'000'000;
  // A heartbeat unchanged for this long means the host is stopped (it beats every 5 ms).
  static constexpr uint64_t kStaleNs = 200'000'000;

  __device__ explicit LiveClock(const uint64_t* heartbeat) : heartbeat_(heartbeat) {
    last_ns_ = checked_ns_ = moved_ns_ = ptx::globaltimer_ns();
    if (heartbeat_) beat_ = ptx::ld_relaxed_sys_u64(heartbeat_);
  }

  // Nanoseconds counted so far; call it on every poll.
  __device__ uint64_t waited_ns() {
    const uint64_t now = ptx::globaltimer_ns();
    if (heartbeat_ && now - checked_ns_ >= kCheckEveryNs) {
      checked_ns_ = now;
      const uint64_t beat = ptx::ld_relaxed_sys_u64(heartbeat_);
      if (beat != beat_) {
        beat_ = beat;
        moved_ns_ = now;
      }
    }
    if (!heartbeat_ || now - moved_ns_ <= kStaleNs) counted_ns_ += now - last_ns_;
    last_ns_ = now;
    return counted_ns_;
  }

 private:
  const uint64_t* heartbeat_;
  uint64_t beat_ = 0;
  uint64_t last_ns_ = 0;
  uint64_t checked_ns_ = 0;
  uint64_t moved_ns_ = 0;
  uint64_t counted_ns_ = 0;
};

}  // namespace p2pbench::kernels
