// The console's view of interference cases: a table per group of cases, and the
// trade table at the end of the run, per workload and engine: the transfer's SM group K
// against link GB/s and the workload's figure, with their spread.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "results/case_result.hpp"

namespace p2pbench {

// The fraction of the link a partition must keep to count as keeping it.
constexpr double kLinkKeptFraction = 0.9;

// One group's interference cases, as the run finishes the group.
void print_interference_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases);

// What one curve (workload, engine, direction, mode, bytes, kernel shape) says: the partition
// that keeps >= 90% of the curve's best transfer-alone GB/s beside the workload with the
// highest workload figure (none where no partition does), and the copy engine's cost to the
// workload (its curves only; none where the slowdown is unknown).
struct TradeFinding {
  struct KeepsLink {
    int sm_partition = 0;                       // requested (0: no partition)
    std::optional<int> transfer_group_sms;      // granted, where known
    double link_gbps = 0;                       // beside the workload
    double workload_figure = 0;                 // beside the transfer, in workload_unit
    std::optional<double> workload_slowdown_pct;
  };
  std::string curve;
  Method engine{};
  std::string workload;
  std::string workload_unit;
  double best_link_alone_gbps = 0;
  std::optional<KeepsLink> keeps_link;
  std::optional<double> copy_engine_cost_pct;  // an engine that takes no SMs (the copy engine): what it costs
};

// One finding per curve, in the order the run met them.
std::vector<TradeFinding> trade_findings(const std::vector<CaseResult>& cases);

// The trade table and its findings; prints nothing when there are no interference cases.
void print_trade_table(std::FILE* out, const std::vector<CaseResult>& cases);

}  // namespace p2pbench
