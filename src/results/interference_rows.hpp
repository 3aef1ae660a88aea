// The fields of an interference row; the results writer calls this for those rows.
#pragma once

#include <nlohmann/json.hpp>

#include "measure/case_outcome.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

// The least overlap of the two windows (in every sample) for a row to be a clean measurement.
constexpr double kMinInterferenceOverlap = 0.95;

// Completes `row` (result_row's common fields) for an interference case: the case's variables
// (engine, workload, sm_partition, both_gpus_busy), then, when it ran, the workload's and the
// transfer's figures alone and together with statistics and samples, the slowdowns and the
// overlap. bandwidth_gbps is the transfer's figure beside the workload.
nlohmann::json interference_row(const CaseSpec& c, const CaseOutcome& o, nlohmann::json row);

}  // namespace p2pbench
