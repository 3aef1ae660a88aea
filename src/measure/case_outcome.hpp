// What the runner measured for one case: raw samples and status, before any formatting.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/interference_samples.hpp"  // issue 13

namespace p2pbench {

enum class CaseStatus { kOk, kFailed, kSkipped };

struct DirectionSamples {
  int src_rank = 0;
  int dst_rank = 1;
  std::vector<double> gbps;     // per sample, from this direction's CUDA events
  std::vector<double> time_us;  // one transfer, per sample
};

struct CaseOutcome {
  CaseStatus status = CaseStatus::kOk;
  std::string error;               // why the case failed or was skipped
  bool fatal = false;              // the error left a GPU unusable: the run must stop
  bool verified = false;           // every sample verified, every byte matched
  uint64_t iterations = 0;         // transfers per sample
  uint64_t buffer_pool_bytes = 0;  // memory each buffer rotated through (0: none)
  std::optional<int> sms_used;     // distinct SMs one launch ran on (SM methods)
  std::vector<double> gbps;        // per sample; bidir: all bytes / union of both windows
  std::vector<double> time_us;     // per sample: one transfer (bidir: the union / iterations)
  std::vector<DirectionSamples> directions;  // bidir only
  std::vector<double> overlap;               // bidir only: intersection / union, per sample
  std::vector<double> latency_us;            // latency methods: one figure per sample
  std::vector<double> issue_interval_us;     // latency_ce: back-to-back issue interval per sample
  // latency_read: SM cycles per load, and those cycles at the peak SM clock (the convention of
  // nvbandwidth, whose figure is clock64 cycles / the peak clock rate).
  std::vector<double> cycles;
  std::vector<double> latency_at_peak_clock_us;
  // latency_read: the chase variant and its side figures (the row's "read_chase"); null otherwise.
  nlohmann::json read_chase;
  std::optional<InterferenceSamples> interference;  // interference cases (issue 13)
};

}  // namespace p2pbench
