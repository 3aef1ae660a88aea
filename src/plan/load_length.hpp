// How long the bandwidth load beside a latency case runs (CaseSpec::load): the run starts it
// sized this long, and the dry run counts it, since the case waits for its load to end.
#pragma once

#include "config/config.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

// Twice what the latency case's samples and its warm-up sample could take at the upper-bound
// costs (a slow link, every step's overhead), plus half a second: the load must outlast the
// case by a wide margin, and the run says so when it did not.
double load_seconds(const Config& config, const CaseSpec& c);

}  // namespace p2pbench
