// Console output of rank 0: a compact table per group of cases and a progress line.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "plan/case_spec.hpp"

namespace p2pbench {

// Cases with the same method, direction, mode and kernel shape share one table.
std::string group_key(const CaseSpec& c);

// The row's headline figure with its unit ("371.2 GB/s", "0.897 us"), "" when it has none.
std::string headline_figure(const nlohmann::json& row);

// Prints one group's rows (result_row JSON) as a table on `out`: GB/s, or microseconds for
// the latency methods.
void print_group_table(std::FILE* out, const std::string& title, const std::vector<nlohmann::json>& rows);

class ProgressLine {
 public:
  // Prints only when stderr is a terminal or `forced`.
  ProgressLine(size_t total, bool forced);
  void update(size_t done, const std::string& current, const std::string& last_figure);
  void finish();

 private:
  size_t total_;
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace p2pbench
