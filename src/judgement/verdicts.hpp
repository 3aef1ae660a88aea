// Health and contention verdicts of a run, judged from what the results' meta recorded: the
// NVML health snapshots before and after the sweep (health_before, health_after, health_delta),
// every rank's pid (ranks) and the run's duration. The output is meta.verdicts (format agreed
// with the report tool):
//   {"status": "ok" | "warn", "contention": bool, "throttled": bool, "link_errors": bool,
//    "items": [{"code", "severity": "warn" | "info", "rank", "gpu_uuid", "message", "evidence"}]}
// status is "warn" when any item is a warning; info items say what was seen but judged harmless
// (or could not be judged). link_errors is true when any NVLink error counter rose or a link went
// down, whatever the severity. The rules and their sources (NVIDIA DCGM) are in verdicts.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace p2pbench {

// DCGM's limits (DCGM 4.6.0, common/DcgmGPUHardwareLimits.h): an NVLink error counter is
// counted once it rises by DCGM_LIMIT_MAX_NVLINK_ERROR; CRC errors only matter at
// DCGM_LIMIT_MAX_NVLINK_CRC_ERROR per second and more ("RM has informed us that CRC errors only
// matter at rates of 100+ per second"), which is also the DCGM diagnostic's default
// nvlink_crc_error_threshold (nvvs/plugin_src/pcie/Pcie.cpp).
inline constexpr double kDcgmNvLinkCrcErrorsPerSecond = 100.0;
inline constexpr unsigned long long kDcgmMaxNvLinkError = 1;

// Clock-event reasons that say the GPU was idle or runs at set clocks, not that it was slowed
// (the run's throttle verdict and a burn-in window's leave them out).
bool is_benign_clock_reason(const std::string& name);

// The verdicts of one run's meta. Never throws on missing or partial health data: what cannot be
// judged becomes a "health_unavailable" info item.
nlohmann::json compute_verdicts(const nlohmann::json& meta);

// One console line per item: "WARN nvlink_errors: GPU0 (00000000:00:06.0) links 0-17: ...".
std::vector<std::string> verdict_lines(const nlohmann::json& verdicts);

// Sets is_self (and "rank") of every process in meta.health_before/health_after from the pids
// of ALL ranks in meta.ranks (the snapshot itself only knows the process that took it).
void mark_own_processes(nlohmann::json& meta);

// mark_own_processes, then meta["verdicts"] = compute_verdicts(meta). Call once the health
// snapshots are in meta (after LinkHealth::finish) and before the results are written.
void add_verdicts(nlohmann::json& meta);

// The end-of-run block: a heading and verdict_lines, or one line saying no warnings.
void print_verdicts(std::FILE* out, const nlohmann::json& verdicts);

}  // namespace p2pbench
