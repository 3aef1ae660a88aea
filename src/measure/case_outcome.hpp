// What the runner measured for one case: raw samples and status, before any formatting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/interference_samples.hpp"
#include "measure/read_chase_samples.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

enum class CaseStatus { kOk, kFailed, kSkipped };

// One flow's figures, per sample: GB/s from its lane's CUDA events (two-sided flows: from the
// later end's window), one transfer's time, and its window from the gate's release (GPU timer).
struct FlowSamples {
  Flow flow{0, 1};
  uint64_t bytes = 0;  // one transfer of the flow (0: the case's bytes)
  std::vector<double> gbps;
  std::vector<double> time_us;
  std::vector<double> window_ns;
  std::vector<double> transfer_us;  // the stamped sample: each transfer's time (the tails)

  // The flow and its bytes per transfer, no figures yet.
  static FlowSamples named(const Flow& f, uint64_t bytes) { return {f, bytes, {}, {}, {}, {}}; }
};

// Latency under load: what the load beside the latency did (one figure per flow, the whole run).
struct LoadOutcome {
  std::vector<FlowSamples> flows;
  std::vector<double> gbps;  // all the load's bytes over its longest lane
  bool covered = false;      // every lane was still running when the latency case ended
  bool verified = false;
  std::string error;         // why the load failed or was skipped (the latency still ran)
};

struct CaseOutcome {
  CaseStatus status = CaseStatus::kOk;
  std::string error;               // why the case failed or was skipped
  bool fatal = false;              // the error left a GPU unusable: the run must stop
  bool verified = false;           // every sample verified, every byte matched
  uint64_t iterations = 0;         // transfers per sample
  uint64_t buffer_pool_bytes = 0;  // memory each buffer rotated through (0: none)
  std::optional<int> sms_used;     // distinct SMs one launch ran on (SM methods)
  std::optional<std::string> engine_mode;  // how the engine ran, where the environment decides (gds)
  std::optional<int> host_numa_node;       // host-link cases: the node the host buffer's pages are on
  std::optional<std::string> host_pages;   // and their size (HostMemory::pages: hugetlb_2MiB, thp, 4KiB)
  std::vector<double> gbps;        // per sample, the aggregate: one flow's own figure, or all
                                   // bytes / the union of every flow's window
  std::vector<double> time_us;     // per sample: one transfer (several flows: the union / iterations)
  std::vector<double> transfer_us; // the stamped sample: per transfer, the slowest flow's time
  std::vector<FlowSamples> flows;  // every flow of the case, in the case's order
  std::vector<double> overlap;     // several flows: intersection / union of their windows, per sample
  std::vector<double> latency_us;            // latency methods: one figure per sample
  std::vector<double> issue_interval_us;     // latency_ce: back-to-back issue interval per sample
  // latency_read: SM cycles per load, and those cycles at the peak SM clock (the convention of
  // nvbandwidth, whose figure is clock64 cycles / the peak clock rate).
  std::vector<double> cycles;
  std::vector<double> latency_at_peak_clock_us;
  std::optional<ReadChaseSamples> read_chase;       // latency_read cases that measured
  std::optional<InterferenceSamples> interference;  // interference cases
  std::optional<LoadOutcome> load;                  // latency cases with a load beside them
};

}  // namespace p2pbench
