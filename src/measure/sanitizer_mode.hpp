// Sanitizer mode: the whole driver made runnable under compute-sanitizer (memcheck, racecheck,
// synccheck). No kernel waits for the host or for another kernel there: no start gate, no clock
// probe, one small sample per case, and the methods whose kernels spin on flags are skipped with
// the reason. (CUDA 13.0's sanitizer does run two streams' kernels at once, and those kernels'
// own tests run under it, scripts/gpu-check.sh; the driver has not been run so: at the
// sanitizer's pace every wait between ranks would need a deadline found by trial.) Its figures
// are not measurements (meta.sanitizer_mode).
#pragma once

#include <optional>
#include <string>

#include "plan/case_spec.hpp"

namespace p2pbench {

// Whether this process runs under compute-sanitizer (its injection variables are set), or
// `requested` (--sanitize).
bool sanitizer_mode_wanted(bool requested);

// Why `m` cannot run in sanitizer mode, or nullopt.
std::optional<std::string> sanitizer_skip_reason(Method m);

// The timeout scale to use: the one given, else 100 in sanitizer mode (everything runs
// 10-100x slower there), else 1.
double effective_timeout_scale(bool sanitizer_mode, bool scale_given, double scale);

}  // namespace p2pbench
