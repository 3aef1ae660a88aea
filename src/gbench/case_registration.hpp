// From the sweep's cases to registered Google Benchmarks: which cases, and their names. Runs
// before any CUDA call, so that --benchmark_list_tests works on a machine without a GPU.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench::gbench {

class TwoGpuSession;

// CaseSpec::name() without the orientation, which --src/--dst fix:
//   "tma/push/bytes:1073741824/blocks:8/smem:131072/stages:4", "ce/pull/bidir/bytes:4096".
// (Google Benchmark appends "/manual_time" to the registered name.)
std::string benchmark_name(const CaseSpec& c);

struct CaseSelection {
  std::vector<CaseSpec> cases;        // sweep order; uni cases in the orientation 0 -> 1 only
  std::vector<std::string> left_out;  // one line per reason a case is not registered
};

// The sweep's cases that p2pbench-gbench runs: GPU-to-GPU methods (ce, ldst, tma), uni cases
// once (rank 0 -> 1 becomes --src -> --dst), cases that can never run (static_skip_reason) left
// out with their reason.
CaseSelection select_cases(const Config& config);

// Registers one benchmark per case, with manual time; each runs on `session`, which must
// outlive benchmark::RunSpecifiedBenchmarks.
void register_cases(const std::vector<CaseSpec>& cases, TwoGpuSession& session);

}  // namespace p2pbench::gbench
