// The fields of an interference row; the results writer calls this for those rows.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

#include "measure/case_outcome.hpp"
#include "plan/case_spec.hpp"
#include "vocab/row_fields.hpp"

namespace p2pbench {

// The least overlap of the two windows (in every sample) for a row to be a clean measurement.
constexpr double kMinInterferenceOverlap = 0.95;

// How much slower `together` is than `alone`, in % of alone (medians; negative: faster); none
// where either has no samples or alone's median is not positive.
std::optional<double> slowdown_pct(const std::vector<double>& alone, const std::vector<double>& together);

// The least overlap of the two windows over the samples; none without samples.
std::optional<double> least_overlap(const InterferenceSamples& s);

// Whether the transfer and the workload ran together for too little of some sample's window.
bool low_overlap(const InterferenceSamples& s);

// The fields every interference row adds through the method registry's row fields
// (vocab/row_fields.hpp), the case's own variables, identity fields all (null in other methods'
// rows): engine, workload, sm_partition, both_gpus_busy and transfer_priority (normal where a
// row lacks it).
std::vector<RowField> interference_fields();

// Completes `row` (result_row's common fields, the case's identity among them) for an
// interference case: when it ran, the workload's and the
// transfer's figures alone and together with statistics and samples, the slowdowns and the
// overlap. bandwidth_gbps is the transfer's figure beside the workload.
nlohmann::json interference_row(const CaseSpec& c, const CaseOutcome& o, nlohmann::json row);

}  // namespace p2pbench
