#include "gbench/benchmark_body.hpp"

#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "gbench/case_registration.hpp"
#include "gbench/case_runner.hpp"

namespace p2pbench::gbench {

namespace {

// Google Benchmark 1.7 takes const char*, 1.8 const std::string&: a C string suits both.
void fail(benchmark::State& state, TwoGpuSession& session, const std::string& name, const std::string& why, bool fatal) {
  session.record_failure(name, why, fatal);
  state.SkipWithError(why.c_str());
}

// Decimal figures computed from the same manual time Google Benchmark reports, so the counters
// need no kIsRate (which would print "GB/s=.../s" on the console).
void set_counters(benchmark::State& state, const CaseRunner& run, uint64_t samples, double seconds, double overlap_sum,
                  bool verified) {
  const double bytes = double(run.bytes_per_sample()) * double(samples);
  state.SetBytesProcessed(int64_t(bytes));
  const double gbps = bytes / seconds / 1e9;
  state.counters["GB/s"] = benchmark::Counter(gbps);
  if (run.sms_used() && *run.sms_used() > 0) {
    state.counters["SMs"] = benchmark::Counter(*run.sms_used());
    state.counters["GB/s_per_SM"] = benchmark::Counter(gbps / (*run.sms_used() * run.directions()));
  }
  state.counters["iterations_per_sample"] = benchmark::Counter(double(run.transfers_per_sample()));
  state.counters["samples"] = benchmark::Counter(double(samples));
  if (run.directions() == 2) state.counters["overlap"] = benchmark::Counter(overlap_sum / double(samples));
  state.counters["verified"] = benchmark::Counter(verified ? 1.0 : 0.0);
}

}  // namespace

void run_benchmark_case(benchmark::State& state, TwoGpuSession& session, const CaseSpec& c) {
  const std::string name = benchmark_name(c);
  if (const auto& why = session.unusable()) {
    state.SkipWithError(("not run: " + *why).c_str());
    return;
  }
  try {
    CaseRunner run(session, c);
    if (auto why = run.unsupported_reason()) {
      state.SkipWithError(("skipped: " + *why).c_str());
      return;
    }
    run.prepare();
    uint64_t samples = 0;
    double seconds = 0, overlap_sum = 0;
    // One iteration is one transfer; a batch is one gated sample of transfers_per_sample of
    // them, timed as a whole. So Time is the mean time of one transfer, comparable between runs
    // whose calibration chose different sample lengths (compare.py compares Time).
    const auto batch = static_cast<benchmark::IterationCount>(run.transfers_per_sample());
    while (state.KeepRunningBatch(batch)) {
      const CaseRunner::Sample s = run.sample();
      state.SetIterationTime(s.seconds);
      if (auto bad = run.verify_last_sample()) {
        fail(state, session, name, *bad, false);
        return;
      }
      ++samples;
      seconds += s.seconds;
      overlap_sum += s.overlap;
    }
    if (samples > 0 && seconds > 0) set_counters(state, run, samples, seconds, overlap_sum, session.options().verify);
  } catch (const CudaError& e) {
    fail(state, session, name, e.what(), e.sticky());
  } catch (const InputError& e) {
    fail(state, session, name, e.what(), false);
  } catch (const RuntimeFailure& e) {
    fail(state, session, name, e.what(), true);  // e.g. a timeout: a GPU may still be busy
  } catch (const std::exception& e) {
    fail(state, session, name, e.what(), false);
  }
}

}  // namespace p2pbench::gbench
