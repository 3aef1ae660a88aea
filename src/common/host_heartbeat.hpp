// A counter in pinned host memory, mapped for the GPU, that a thread of this process advances
// every few milliseconds. GPU-side waits (the start gate, the staged ring's flags, the ping-pong)
// count their timeout only while it moves (kernels/live_clock.cuh): when the whole job is paused
// (SIGSTOP of every rank, a scheduler's suspend) the counter stops and so do their clocks, while a
// single stopped peer is still caught, because this process keeps beating.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "common/cuda_raii.hpp"

namespace p2pbench {

class HostHeartbeat {
 public:
  static constexpr int kPeriodMs = 5;

  // Needs the current device set (the counter is mapped for it).
  HostHeartbeat();
  ~HostHeartbeat();
  HostHeartbeat(const HostHeartbeat&) = delete;
  HostHeartbeat& operator=(const HostHeartbeat&) = delete;

  // The counter as kernels read it.
  const uint64_t* device_word() const { return static_cast<const uint64_t*>(word_.device()); }

 private:
  void beat();

  MappedHostBuffer word_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace p2pbench
