// The driver's --expect FILE: expected values per case ("is this number normal?"), read before
// the run and checked against its cases at the end. Format (shared with `p2pbench-report expect
// make` / `check`, scripts/p2pbench_report/expectations.py):
//   {"format": "p2pbench-expectations", "version": 1, "system", "made_from", "tolerance_pct",
//    "sources": [{"path", ...}] and "allow_warnings" (optional: what the file was made from),
//    "made_with": {"verify", "samples", "min_sample_time_ms"} (optional),
//    "expectations": [{"match": {...row fields...}, "pair_class": "NV18",
//                      "metric": "bandwidth_gbps" | "latency_us", "reference", "floor" | "ceiling",
//                      "runs", "worst_run_pct" (optional: the sources' spread)}]}
// The judgement of cases against the file: expectation_check.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "judgement/expectation_check.hpp"
#include "results/case_result.hpp"

namespace p2pbench {

// Reads and checks the file; InputError naming --expect, the file and the field otherwise.
nlohmann::json load_expectations(const std::string& path);

// Checks a parsed document (load_expectations without the file); `path` names it in errors.
void validate_expectations(const nlohmann::json& doc, const std::string& path);

// Refuses (InputError naming --expect) a sweep made with less care than the expectations'
// sources (their "made_with"): verification off, fewer samples, shorter samples. Checked before
// the run, as the report tool's `check` refuses such a file unless forced.
void check_run_comparable(const nlohmann::json& expectations, const nlohmann::json& config, const std::string& path);

// The end-of-run block for --expect (nothing when `expectations` is null): the PASS/FAIL lines,
// what was not measured, a warning where the run's verdicts (meta.verdicts) say contention or
// throttling, and the summary. Returns the exit status it asks for: 1 on any FAIL or when the
// run's pair class is unknown (nothing could be checked), else 0.
int report_expectations(std::FILE* out, const nlohmann::json& expectations, const std::vector<CaseResult>& cases,
                        const nlohmann::json& meta);

}  // namespace p2pbench
