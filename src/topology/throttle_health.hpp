// Settings and limiter counters of one GPU that change what a run measures: persistence mode
// and the time each clock limiter held the GPU below its application clocks. Part of the health
// snapshot (health.hpp); split out to keep that file readable.
#pragma once

#include <nlohmann/json.hpp>

#include "topology/nvml_library.hpp"

namespace p2pbench {

// nvmlDeviceGetPersistenceMode: true when the driver stays loaded between processes.
Queried<bool> persistence_mode(const NvmlLibrary& lib, nvml::Device device);

// nvmlDeviceGetViolationStatus per limiter, in ns accumulated since the driver loaded:
// {"power", "thermal", "sync_boost", "board_limit", "low_utilization", "reliability"}. A limiter
// that cannot be read is null with its reason under "unavailable". The difference of two
// snapshots says how long a limiter acted between them, which a snapshot of the current clock
// event reasons cannot (it sees one instant).
nlohmann::json violation_times_ns(const NvmlLibrary& lib, nvml::Device device);

}  // namespace p2pbench
