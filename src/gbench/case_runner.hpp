// One case on the session's two GPUs, in one process, on the MPI driver's case loop (CaseLoop:
// the same steps, engines, timer, fills and verification). No Google Benchmark here:
// benchmark_body.cpp maps samples to iterations.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gbench/two_gpu_session.hpp"
#include "measure/case_loop.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench::gbench {

class CaseRunner {
 public:
  // Session slots stand in for ranks: flow 0 -> 1 is --src -> --dst.
  CaseRunner(TwoGpuSession& session, const CaseSpec& c);

  // Why the case cannot run on these GPUs (the loop's skip step), or nullopt.
  std::optional<std::string> unsupported_reason();

  // Buffers, source pattern, engine set-up, SM count, calibration (transfers per sample so a
  // sample lasts min_sample_time_ms, fixed by the session per case), graph capture and warm-up.
  // Throws RuntimeFailure with the loop's reason when a step failed.
  void prepare();

  struct Sample {
    double seconds;  // uni: CUDA events around the transfers; bidir: union of both GPUs' windows
    double overlap;  // bidir: intersection / union of the two windows; uni: 1
  };
  // One gated sample. With verification on, the sources get a fresh pattern and the
  // destinations its poison first (untimed).
  Sample sample();
  // Checks every slot the last sample wrote, on the GPU that owns it; nullopt when every byte
  // matches or verification is off.
  std::optional<std::string> verify_last_sample();

  uint64_t transfers_per_sample() const { return loop_->iterations(); }
  int directions() const { return int(spec_.flows.size()); }
  uint64_t bytes_per_sample() const { return spec_.bytes * loop_->iterations() * spec_.flows.size(); }
  std::optional<int> sms_used() const { return outcome_.sms_used; }  // per driving GPU; nullopt for ce

 private:
  TwoGpuSession& session_;
  CaseSpec spec_;
  std::string name_;
  std::unique_ptr<CaseLoop> loop_;
  CaseOutcome outcome_;
  int samples_ = 0;
};

}  // namespace p2pbench::gbench
