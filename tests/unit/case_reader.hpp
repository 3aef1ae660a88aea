// Result rows read back into typed cases, for tests and the report tool's test helper only:
// p2pbench writes its rows once and never reads them. A test states its cases in the file's
// own words (schema v2 rows, docs/groups.md; v1 rows as two-rank matrix rows) and hands the
// analyses what the run would have held.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "results/case_result.hpp"

namespace p2pbench::testing {

// The case a row describes, with its figures as samples: the row's raw samples
// (samples_gbps, samples_us), else its statistics (min, median, max) standing for them, so
// that medians and ranges read as the row has them. None for a method this build does not know.
std::optional<CaseResult> case_from_row(const nlohmann::json& row);

// Every row a case could be read from, in order.
std::vector<CaseResult> cases_from_rows(const std::vector<nlohmann::json>& rows);

// The ordered pairs the rows' flows mark as one GPU (`same_device`), for links built from a
// meta that does not say.
std::set<std::pair<int, int>> same_device_flows(const std::vector<nlohmann::json>& rows);

}  // namespace p2pbench::testing
