// The named axes of the probe methods (latency_signal, latency_read, latency_ce, atomic): each
// axis is declared once, with the config key its values come from and what one value sets in a
// case; the sweep expands them generically (the first axis outermost) and counts them from the
// same declaration, as nvbench's named axes. The kernel-shape axes of the copy methods are the
// registry's (SweptAxis); these are the probes' own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

struct ProbeAxis {
  std::string key;  // the config key of its values: "latency.protocols"
  size_t size = 0;  // how many values
  std::function<void(CaseSpec&, size_t)> apply;  // sets value i in the case
};

struct ProbeAxes {
  std::vector<ProbeAxis> axes;
  std::function<void(CaseSpec&)> finish;  // what follows from all of them (bytes, the row's protocol)
};

// The method's axes (none for a method that is not a probe).
ProbeAxes probe_axes_of(Method m, const Config& config);

// Every combination, the first axis outermost, each finished, handed to `emit` in order.
void expand_probe_axes(const CaseSpec& base, const ProbeAxes& axes, const std::function<void(const CaseSpec&)>& emit);

// How many combinations (saturating at UINT64_MAX).
uint64_t probe_axes_count(const ProbeAxes& axes);

}  // namespace p2pbench
