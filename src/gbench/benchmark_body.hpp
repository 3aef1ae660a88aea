// The function behind every registered benchmark. One Google Benchmark iteration is one
// transfer; each batch of iterations_per_sample iterations is one gated, verified sample whose
// manual time comes from the GPUs. Then the counters.
#pragma once

#include <benchmark/benchmark.h>

#include "gbench/two_gpu_session.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench::gbench {

// Never throws: a case that cannot run ends with state.SkipWithError ("skipped: <reason>" for
// cases these GPUs do not support; the error otherwise, also recorded in the session).
void run_benchmark_case(benchmark::State& state, TwoGpuSession& session, const CaseSpec& c);

}  // namespace p2pbench::gbench
