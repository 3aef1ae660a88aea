// Link and GPU health, snapshotted before and after a run so that a result can show whether
// NVLink errors, ECC errors, throttling or other processes may have disturbed it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"

namespace p2pbench {

// {"available": true, "driver_version", "taken_at_unix_s", "gpus": [per GPU: pci_bus_id, uuid,
// name, nvlink {active_links, links[{link, active, <counter>...}], errors_total{replay, recovery,
// crc_flit, crc_data, ecc_data}}, ecc {mode_current, mode_pending, volatile{corrected,
// uncorrected}, aggregate{...}}, mig {current, pending}, clocks_mhz {sm, sm_max, mem, mem_max},
// clock_event_reasons {raw, names}, persistence_mode, violation_ns {power, thermal, ...} (see
// throttle_health.hpp), temperature_c, power_w, processes [{pid, used_memory_bytes, is_self}]]}.
// is_self compares with this process only; the driver re-marks it from every rank's pid
// (judgement/verdicts.hpp, mark_own_processes). A query that fails leaves null and its reason under
// the enclosing object's "unavailable"; a GPU that cannot be found gets "error". Never throws for
// NVML failures.
nlohmann::json health_snapshot(const NvmlLibrary& lib, const std::vector<GpuIdentity>& gpus);

// The snapshot to record when NVML could not be opened: {"available": false, "reason": ...}.
nlohmann::json health_unavailable(const std::string& reason);

// Increase of every counter between two snapshots, per GPU (matched by UUID, else bus id):
// nvlink_errors, nvlink_errors_by_link (links that increased), links_down, links_up,
// ecc_volatile, ecc_aggregate, violation_ns (limiter time, not an error), errors_increased; and
// errors_increased over all GPUs, and "seconds" between the snapshots where both carry a time. A counter
// null in either snapshot, or one that went backwards (driver reload), is null with a reason.
nlohmann::json health_delta(const nlohmann::json& before, const nlohmann::json& after);

// Names of the set clock event ("throttle") reason bits, e.g. {"gpu_idle", "sw_power_cap"}.
std::vector<std::string> clock_event_reason_names(unsigned long long bits);

}  // namespace p2pbench
