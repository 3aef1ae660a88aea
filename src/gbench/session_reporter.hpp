// The display reporter that opens the GPUs at the one moment Google Benchmark is about to run
// benchmarks: ReportContext, which it calls before the first run and never when it only lists
// names (--benchmark_list_tests) or when the filter matches nothing. So listing needs no GPU,
// and a run without GPUs stops before any benchmark with one clear message. Everything else
// goes to the reporter that --benchmark_format selects.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <vector>

namespace p2pbench::gbench {

class SessionReporter final : public benchmark::BenchmarkReporter {
 public:
  // `open` sets up the GPUs and the custom context; false stops the run (it said why).
  explicit SessionReporter(std::function<bool()> open);

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  std::function<bool()> open_;
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  bool running_ = false;
};

}  // namespace p2pbench::gbench
