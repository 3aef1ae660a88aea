#include "gbench/case_registration.hpp"

#include <benchmark/benchmark.h>

#include <map>

#include "gbench/benchmark_body.hpp"
#include "plan/sweep.hpp"

namespace p2pbench::gbench {

namespace {

// Methods that move bytes between the two GPUs' memories with the engines of make_engine.
// Host-link methods, two-rank baselines and methods whose two ends wait for each other (one
// process steps its GPUs one after the other) stay with the MPI driver.
bool gpu_to_gpu(Method m) { return method_info(m).kind == MethodKind::kCopy && !method_info(m).needs_both_ends_running; }

}  // namespace

std::string benchmark_name(const CaseSpec& c) {
  std::string name = c.name();
  if (c.mode == Mode::kUni) {
    const std::string orientation =
        "/" + std::string(to_string(c.mode)) + "/" + std::to_string(c.src_rank()) + "->" + std::to_string(c.dst_rank());
    const size_t at = name.find(orientation);
    if (at != std::string::npos) name.erase(at, orientation.size());
  }
  return name;
}

CaseSelection select_cases(const Config& config) {
  CaseSelection out;
  std::map<std::string, size_t> other_methods;  // method -> cases left out
  for (const CaseSpec& c : expand_cases(config)) {
    if (!gpu_to_gpu(c.method)) {
      ++other_methods[to_string(c.method)];
      continue;
    }
    if (c.mode == Mode::kUni && !(c.src_rank() == 0 && c.dst_rank() == 1)) continue;  // the same case, --src/--dst swapped
    if (auto why = static_skip_reason(c)) {
      out.left_out.push_back(benchmark_name(c) + ": " + *why);
      continue;
    }
    out.cases.push_back(c);
  }
  for (const auto& [method, count] : other_methods)
    out.left_out.push_back("method " + method + " (" + std::to_string(count) +
                           " cases): runs in the MPI driver only (p2pbench-gbench measures ce, ldst and tma)");
  return out;
}

void register_cases(const std::vector<CaseSpec>& cases, TwoGpuSession& session) {
  for (const CaseSpec& c : cases) {
    // A const char* name: Google Benchmark 1.7 takes const char*, 1.8 const std::string&.
    benchmark::RegisterBenchmark(benchmark_name(c).c_str(),
                                 [&session, c](benchmark::State& state) { run_benchmark_case(state, session, c); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace p2pbench::gbench
