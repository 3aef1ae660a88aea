#include "measure/transfer_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "common/errors.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kMaxIterations = 20000;  // transfers captured into one sample's graph

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

TransferTimer::TransferTimer(double timeout_scale, bool ungated)
    : timeout_scale_(timeout_scale),
      ungated_(ungated),
      stream_(make_stream("transfers")),
      start_(make_event("the start of a sample")),
      stop_(make_event("the end of a sample")),
      stamps_(sizeof(kernels::GateStamps), "gate time stamps") {}

// One untimed launch first: what a method builds on first use (NCCL's connections for the
// operation, module loads) is not its time. Then kCalibrationLaunches back to back between two
// events: ranks whose launches wait for each other (collectives, NCCL) meet once rather than at
// every launch, where each launch timed alone also held the ranks' skew (their hosts' wake-ups),
// and a calibration several times too long gave samples of a few launches, whose gate overhead
// then weighed on every launch's time.
double TransferTimer::time_single_ms(const EnqueueTransfer& enqueue) {
  enqueue(0, stream_.get());
  cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording a calibration start event");
  for (int i = 0; i < kCalibrationLaunches; ++i) enqueue(0, stream_.get());
  cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a calibration stop event");
  wait_for_event(stop_.get(), (kCalibrationLaunches + 1) * kUngatedWaitS * timeout_scale_, "the calibration transfers");
  float elapsed = 0;
  cuda_check(cudaEventElapsedTime(&elapsed, start_.get(), stop_.get()), "reading a calibration time");
  return std::max(1e-4, double(elapsed) / kCalibrationLaunches);
}

uint64_t TransferTimer::iterations_for(double single_ms, double min_sample_ms) {
  return uint64_t(std::clamp(std::ceil(min_sample_ms / single_ms), 1.0, double(kMaxIterations)));
}

void TransferTimer::build(const EnqueueTransfer& enqueue, uint64_t iterations) {
  graph_ = GraphExec();
  cuda_check(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal), "starting graph capture");
  try {
    for (uint64_t i = 0; i < iterations; ++i) enqueue(i, stream_.get());
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream_.get(), &broken);
    if (broken) cudaGraphDestroy(broken);
    throw;
  }
  cudaGraph_t raw = nullptr;
  cuda_check(cudaStreamEndCapture(stream_.get(), &raw), "ending graph capture");
  Graph graph(raw);
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph.get(), 0), "instantiating the sample graph");
  graph_ = GraphExec(exec);
  iterations_ = iterations;
}

void TransferTimer::replay_ungated() {
  cuda_check(cudaGraphLaunch(graph_.get(), stream_.get()), "launching a warm-up sample");
  cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a warm-up event");
  wait_for_event(stop_.get(), kUngatedWaitS * timeout_scale_, "warm-up");
}

void TransferTimer::warm_up_launches(uint64_t launches) {
  for (uint64_t i = 0; i < launches; ++i) replay_ungated();
}

uint64_t TransferTimer::warmup_launches_for(double single_ms, uint64_t iterations, double warmup_ms) {
  const double sample_ms = std::max(single_ms, 1e-6) * double(std::max<uint64_t>(iterations, 1));
  return std::clamp<uint64_t>(uint64_t(std::ceil(warmup_ms / sample_ms)), 1, 10000);
}

void TransferTimer::warm_up(double ms) {
  const auto t0 = Clock::now();
  do {
    replay_ungated();
  } while (seconds_since(t0) * 1e3 < ms);
}

void TransferTimer::start_run(uint64_t launches) {
  cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording a background run's start");
  for (uint64_t i = 0; i < launches; ++i) cuda_check(cudaGraphLaunch(graph_.get(), stream_.get()), "launching a background run");
  cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a background run's end");
}

bool TransferTimer::running() const {
  const cudaError_t e = cudaEventQuery(stop_.get());
  if (e == cudaErrorNotReady) return true;
  cuda_check(e, "asking whether a background run finished");
  return false;
}

double TransferTimer::finish_run(double deadline_s, const std::string& what) {
  wait_for_event(stop_.get(), deadline_s, what);
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "reading a background run's time");
  return double(ms);
}

void TransferTimer::enqueue_gated(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s) {
  auto* stamps = static_cast<kernels::GateStamps*>(stamps_.host());
  *stamps = {0, 0, 0, 0};
  gate_timeout_s_ = gate_timeout_s;
  auto* device_stamps = static_cast<kernels::GateStamps*>(stamps_.device());
  // Ticket 0 is always open: the kernel only stamps the start.
  kernels::enqueue_gate_wait(gate, ungated_ ? 0 : ticket, uint64_t(gate_timeout_s * 1e9), heartbeat, device_stamps,
                             stream_.get());
  cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording a sample's start event");
  cuda_check(cudaGraphLaunch(graph_.get(), stream_.get()), "launching a sample");
  cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a sample's stop event");
  kernels::enqueue_end_stamp(device_stamps, stream_.get());
}

TransferTimer::Sample TransferTimer::wait(double deadline_s, const std::string& what) {
  wait_for_event(stop_.get(), deadline_s, what);
  cuda_check(cudaStreamSynchronize(stream_.get()), "waiting for the end stamp");  // one tiny kernel left
  const auto* stamps = static_cast<const kernels::GateStamps*>(stamps_.host());
  if (stamps->timed_out)
    throw RuntimeFailure("the start gate never opened within " + std::to_string(gate_timeout_s_) + " s");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "reading a sample's time");
  return {ms, double(stamps->end_ns - stamps->release_ns), double(stamps->release_ns), double(stamps->end_ns)};
}

}  // namespace p2pbench
