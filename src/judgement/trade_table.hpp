// The console's view of interference cases: a table per group of cases, and the
// trade table at the end of the run, per workload and engine: the transfer's SM group K
// against link GB/s and the workload's figure, with their spread.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "results/case_result.hpp"

namespace p2pbench {

// The fraction of the link a partition must keep to count as keeping it.
constexpr double kLinkKeptFraction = 0.9;

// One group's interference cases, as the run finishes the group.
void print_interference_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases);

// For each curve (workload, engine, direction, mode, bytes, kernel shape): the partition that
// keeps >= 90% of the curve's best transfer-alone GB/s beside the workload with the highest
// workload figure, and the copy engine's cost to the workload. JSON for tests and the table.
nlohmann::json trade_findings(const std::vector<CaseResult>& cases);

// The trade table and its findings; prints nothing when there are no interference cases.
void print_trade_table(std::FILE* out, const std::vector<CaseResult>& cases);

}  // namespace p2pbench
