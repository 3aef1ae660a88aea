// The one judgement of cases against an expectations file (expectations.hpp has the format):
// the run's --expect reads it at the end, and `p2pbench-check` (tools/) gives it to the report
// tool's `check`, which renders it and never judges a case itself.
//
// - a case matches an entry when every key of "match" equals the case's field as its row names
//   it (null matches a null or missing field), the pair class equals the entry's "pair_class",
//   and the case is not ok or measured the entry's metric;
// - the figure is the median of the case's raw samples of that metric;
// - PASS when figure >= floor (bandwidth) or figure <= ceiling (latency); a failed or skipped
//   case is a FAIL; margin = distance to the limit on the good side, in the unit and in % of the
//   limit (negative for a FAIL);
// - ok cases no entry matches and entries no case matches are listed, never failed.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "results/case_result.hpp"

namespace p2pbench {

// A metric an entry may name: its limit's key and unit, and which way is good.
struct ExpectationMetric {
  const char* name;   // "bandwidth_gbps", "latency_us"
  const char* limit;  // "floor" or "ceiling"
  const char* unit;
  bool higher_is_better;
};
// The metric of that name, or null.
const ExpectationMetric* expectation_metric(const nlohmann::json& name);

// What the judgement needs of one case.
struct CheckedCase {
  nlohmann::json identity;            // its variables as its row names them (identity_fields; a row will do)
  CaseStatus status = CaseStatus::kOk;
  std::string error;                  // why it failed or was skipped
  std::optional<std::string> metric;  // "bandwidth_gbps" or "latency_us": what an ok case measured
  std::vector<double> samples;        // that metric's raw samples
};

// A case of the run: identity_fields, and its one-way times (latency) or GB/s (every other
// method; an interference case's beside the workload), as its row's samples_us / samples_gbps.
CheckedCase checked_case(const CaseResult& r);

struct JudgedCase {
  size_t case_index = 0;
  std::optional<size_t> entry_index;  // into the expectations' list; none: no entry matched
  std::string result;                 // "PASS", "FAIL", "NO EXPECTATION"
  std::optional<double> figure;
  std::optional<double> margin;       // in the metric's unit, positive on the good side
  std::optional<double> margin_pct;   // margin / limit x 100
  std::string name;                   // the entry's case, "ce push uni 1 GiB blocks=132" (judged cases)
  std::string note;                   // a FAIL without a figure: why
  std::string line;                   // "PASS ce push uni 1 GiB: 396 GB/s >= floor 376.2 GB/s, ..." (judged cases)
};

struct ExpectationReport {
  std::vector<JudgedCase> judged;     // in case order; per case its entries in the file's order
  std::vector<size_t> not_measured;   // entries of the pair class no case matched
  std::vector<std::string> not_measured_lines;
  int passed = 0;
  int failed = 0;
  int without_expectation = 0;        // ok cases that no entry matches
  std::string summary;
  bool any_fail() const { return failed > 0; }
};

// `expectations`: a document validate_expectations accepted.
ExpectationReport check_expectations(const nlohmann::json& expectations, const std::vector<CheckedCase>& cases,
                                     const std::string& pair_class);

// {"pair_class", "judged": [{"case", "entry", "result", "figure", "margin", "margin_pct", "note",
// "line"}], "not_measured": [entry indices], "passed", "failed", "without_expectation", "summary"}
nlohmann::json to_json(const ExpectationReport& report, const std::string& pair_class);

}  // namespace p2pbench
