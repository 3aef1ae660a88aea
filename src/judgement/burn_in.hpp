// A burn-in's windows and what they say: each window's GPU record (NVML at its end and the rise
// of its counters over it), the verdicts judged from every finished window with the rows run in
// them, and the one-screen summary. Pure C++ on the results' JSON (rows and health snapshots as
// the writer and topology/health.hpp make them), so the rules are unit-tested without a GPU.
// The format is the results file's "burn_in" object (docs/burn-in.md).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "config/burn_in_config.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// One window's "gpus": per GPU of `snapshot_end` (health_snapshot at the window's end), its
// clocks, temperature, power and clock-event reasons then, and the rise of its NVLink error
// and violation counters since the window began (`delta`: health_delta over the window). The
// ranks on each GPU come from `layout`.
nlohmann::json window_gpus(const nlohmann::json& snapshot_end, const nlohmann::json& delta, const GroupLayout& layout);

// The verdicts of the windows so far: {"status": "ok" | "warn", "items": [...]} with the codes
// intermittent_flow, error_burst, errors_in_fast_windows and throttled_window. `rows`: the
// document's results (rows of a window carry "window"); `windows`: burn_in.windows.
nlohmann::json burn_in_verdicts(const nlohmann::json& windows, const std::vector<nlohmann::json>& rows, double margin);

// The end-of-run summary: windows run, per flow its median and its worst window, the verdicts.
std::vector<std::string> burn_in_summary_lines(const nlohmann::json& burn_in, const std::vector<nlohmann::json>& rows);

// One line after each window: "burn-in window 3/30 (30.1 s, 270 s left): ce 0->1 52.1 GB/s ...".
std::string window_progress_line(const nlohmann::json& window, int windows_planned, double duration_s,
                                 const std::vector<nlohmann::json>& rows);

}  // namespace p2pbench
