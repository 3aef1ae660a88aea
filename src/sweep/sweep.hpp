// Expansion of the declared axes into the ordered list of cases, and its cost estimate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sweep/case_spec.hpp"

namespace p2pbench {

// Every case of the sweep, grouped so that one console table (method/direction/mode/shape)
// lists consecutive sizes. Uni cases come in both orientations (0->1, 1->0).
std::vector<CaseSpec> expand_cases(const Config& config);

// An interference case's transfer as a case of its engine's method (issue 13); other cases as they are.
CaseSpec transfer_case_of(const CaseSpec& c);

// Why a case can never run, whatever the GPU (e.g. a TMA chunk that is not a multiple of
// 16 bytes), or nullopt. Device-dependent limits are checked by the engines at run time.
std::optional<std::string> static_skip_reason(const CaseSpec& c);

// Values that are wrong on their own (threads 1025, unroll 3) are bad input, not skips.
void validate_kernel_axes(const Config& config);

struct SweepEstimate {
  size_t cases = 0;
  size_t skipped = 0;
  double bytes_moved = 0;   // over all samples and warm-up, at the assumed bandwidth
  double seconds = 0;
};
// Assumes a link of `gbps` GB/s and a per-transfer latency floor, for --dry-run.
SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases, double gbps = 380.0);

}  // namespace p2pbench
