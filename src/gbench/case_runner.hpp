// One case on the session's two GPUs, in one process: the steps of the MPI driver's PairRunner
// (prepare, calibrate, capture, warm up; then per sample fill and poison, queue behind the gate
// on every driving GPU, release, wait, verify) with the same engines and TransferTimer.
// No Google Benchmark here: benchmark_body.cpp maps samples to iterations.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/transfer_engine.hpp"
#include "gbench/two_gpu_session.hpp"
#include "measure/runner_options.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench::gbench {

class CaseRunner {
 public:
  // Session slots stand in for ranks: orientation 0 -> 1 is --src -> --dst.
  CaseRunner(TwoGpuSession& session, const CaseSpec& c);

  // Why the case cannot run on these GPUs (the engine's check on each driving GPU), or nullopt.
  std::optional<std::string> unsupported_reason() const;

  // Buffers, source pattern, engine set-up, SM count, calibration (transfers per sample so a
  // sample lasts min_sample_time_ms), graph capture and warm-up on every driving GPU.
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

  uint64_t transfers_per_sample() const { return iterations_; }
  int directions() const { return int(lanes_.size()); }
  uint64_t bytes_per_sample() const { return spec_.bytes * iterations_ * lanes_.size(); }
  std::optional<int> sms_used() const { return sms_used_; }  // per driving GPU; nullopt for ce

 private:
  // One orientation and the GPU that enqueues its work (push: the source, pull: the destination).
  struct Lane {
    Flow o;
    int driver;
    std::unique_ptr<TransferEngine> engine;
  };

  Transfer transfer(const Lane& lane, uint64_t index) const;
  TransferTimer& timer_of(int slot) { return *session_.gpu(slot).timer; }
  void fill_sources(uint64_t seed, bool poison_destinations);

  TwoGpuSession& session_;
  CaseSpec spec_;
  std::string name_;
  BufferLayout layout_;
  std::vector<Lane> lanes_;
  uint64_t iterations_ = 0;
  std::optional<int> sms_used_;
  double deadline_s_ = 0;
  uint64_t seed_ = 0;
};

}  // namespace p2pbench::gbench
