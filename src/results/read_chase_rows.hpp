// The row's "read_chase" of a latency_read case: the variant the case ran (from its spec), both
// timings of every sample with their statistics, the warm-up, and where the chase ran.
#pragma once

#include <nlohmann/json.hpp>

#include "measure/read_chase_samples.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

nlohmann::json read_chase_json(const CaseSpec& c, const ReadChaseSamples& s);

}  // namespace p2pbench
