// What every runner needs to know about a sweep, and where a case's buffer slots lie.
#pragma once

#include <cstdint>
#include <optional>

#include "common/fault_injection.hpp"
#include "common/watchdog.hpp"
#include "config/config.hpp"

namespace p2pbench {

struct RunnerOptions {
  int samples = 10;
  double min_sample_time_ms = 1.0;
  double warmup_time_ms = 10.0;
  bool verify = true;
  uint64_t buffer_pool_bytes = 0;
  double gate_timeout_s = 10.0;
  double timeout_scale = 1.0;  // stretches every timeout (e.g. under compute-sanitizer)
  LatencySettings latency;
  Watchdog* watchdog = nullptr;  // guards each step's local part (may be null)
  StepFaults* faults = nullptr;  // the tests' step=S faults (may be null)
  bool sanitizer_mode = false;   // no start gate: nothing may spin under compute-sanitizer
  // The burn-in's test knob, set for the window it slows: each transfer of this flow waits
  // (factor - 1) times its calibrated transfer time first.
  struct SlowFlow {
    Flow flow{0, 1};
    double factor = 1.0;
  };
  std::optional<SlowFlow> slow_flow;
  static RunnerOptions from(const Config& c, double timeout_scale, Watchdog* watchdog = nullptr,
                            bool sanitizer_mode = false);
};

// Where slot k of a case's buffers starts, when small messages rotate through a pool.
struct BufferLayout {
  uint64_t slots = 1;
  uint64_t stride = 0;  // bytes between slot starts
  uint64_t footprint() const { return slots * stride; }
  static BufferLayout for_case(uint64_t bytes, uint64_t pool_bytes);
};

}  // namespace p2pbench
