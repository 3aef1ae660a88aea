// Places a GPU's %globaltimer on the host's CLOCK_REALTIME time line, so that stamps from two
// GPUs (whose timers are not aligned) can be compared.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

namespace p2pbench {

struct ClockOffset {
  double offset_ns = 0;  // gpu_timer - host_clock, best (smallest) estimate
  double spread_ns = 0;  // range of the estimates over the rounds: the calibration's noise
  int rounds = 0;
  double to_host_ns(uint64_t gpu_ns) const { return double(gpu_ns) - offset_ns; }
  nlohmann::json to_json() const;
};

// The host stores its clock into mapped memory that a kernel polls; the kernel answers with
// its timer. The smallest (gpu - host) over `rounds` is the offset plus the least visibility
// latency (~1 us over PCIe), the same on both GPUs to within that latency.
ClockOffset calibrate_gpu_clock(int rounds = 32);

// CLOCK_REALTIME in nanoseconds (the host time line shared by every process on the node).
uint64_t host_clock_ns();

}  // namespace p2pbench
