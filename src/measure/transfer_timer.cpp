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

}  // namespace

TransferTimer::TransferTimer(double timeout_scale, bool ungated)
    : timeout_scale_(timeout_scale),
      ungated_(ungated),
      stream_(make_stream("transfers")),
      start_(make_event("the start of an ungated run")),
      stop_(make_event("the end of an ungated run")),
      window_(stream_.get(), "sample") {}

// One untimed launch first: what a method builds on first use (NCCL's connections for the
// operation, module loads) is not its time. Then kCalibrationLaunches back to back between two
// events: ranks whose launches wait for each other (collectives, NCCL) meet once rather than at
// every launch, where each launch timed alone also held the ranks' skew (their hosts' wake-ups),
// and a calibration several times too long gave samples of a few launches, whose gate overhead
// then weighed on every launch's time.
void TransferTimer::set_feeding(Feeding feeding, uint64_t commands_per_transfer) {
  feeding_ = feeding;
  commands_per_transfer_ = std::max<uint64_t>(1, commands_per_transfer);
}

double TransferTimer::time_single_ms(const EnqueueTransfer& enqueue) {
  if (feeding_ == Feeding::kHostDriven) {  // the same untimed first transfer, then the host clock
    host_enqueue_ = enqueue;
    const double bound_s = kUngatedWaitS * timeout_scale_;
    run_host_driven(1, bound_s, "the first calibration transfer", nullptr);
    return std::max(1e-4, run_host_driven(kCalibrationLaunches, kCalibrationLaunches * bound_s, "the calibration transfers",
                                          nullptr) / kCalibrationLaunches);
  }
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

GraphExec TransferTimer::capture(const EnqueueTransfer& enqueue, uint64_t iterations,
                                 const std::function<void(uint64_t)>& after) {
  const Graph graph = capture_graph(stream_.get(), [&] {
    for (uint64_t i = 0; i < iterations; ++i) {
      enqueue(i, stream_.get());
      if (after) after(i);
    }
  }, "a sample's transfers");
  return instantiate(graph, "the sample graph");
}

void TransferTimer::build(const EnqueueTransfer& enqueue, uint64_t iterations) {
  graph_ = GraphExec();  // the old graph goes before the new one is captured
  if (captured())
    graph_ = capture(enqueue, iterations, nullptr);
  else
    host_enqueue_ = enqueue;
  iterations_ = iterations;
}

// cudaEventRecordExternal makes each record a node of the graph; a plain record during capture
// only orders streams and would time nothing.
void TransferTimer::build_stamped(const EnqueueTransfer& enqueue, uint64_t iterations) {
  stamped_graph_ = GraphExec();
  if (!captured()) {  // queued: events recorded between the transfers; host-driven: the host's clock
    host_enqueue_ = enqueue;
    stamped_iterations_ = iterations;
  }
  while (transfer_events_.size() < iterations + 1) transfer_events_.push_back(make_event("a transfer's end"));
  if (!captured()) return;
  auto record = [&](uint64_t k) {
    cuda_check(cudaEventRecordWithFlags(transfer_events_[k].get(), stream_.get(), cudaEventRecordExternal),
               "recording a transfer's timing event");
  };
  // The first event is recorded before the capture's first transfer, inside the capture.
  auto enqueue_first_stamped = [&](uint64_t i, cudaStream_t s) {
    if (i == 0) record(0);
    enqueue(i, s);
  };
  stamped_graph_ = capture(enqueue_first_stamped, iterations, [&](uint64_t i) { record(i + 1); });
  stamped_iterations_ = iterations;
}

std::vector<double> TransferTimer::transfer_times_ms() const {
  if (feeding_ == Feeding::kHostDriven) return host_transfer_ms_;
  std::vector<double> times;
  for (uint64_t i = 0; i < stamped_iterations_; ++i) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, transfer_events_[i].get(), transfer_events_[i + 1].get()),
               "reading a transfer's time");
    times.push_back(double(ms));
  }
  return times;
}

void TransferTimer::replay_ungated() {
  if (feeding_ == Feeding::kHostDriven) {
    run_host_driven(iterations_, kUngatedWaitS * timeout_scale_, "warm-up", nullptr);
    return;
  }
  if (captured())
    cuda_check(cudaGraphLaunch(graph_.get(), stream_.get()), "launching a warm-up sample");
  else
    queue_transfers(0, iterations_, false);
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
  if (feeding_ == Feeding::kHostDriven)
    throw RuntimeFailure("a host-driven method cannot run in the background beside another case");
  cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording a background run's start");
  for (uint64_t i = 0; i < launches; ++i) {
    if (captured())
      cuda_check(cudaGraphLaunch(graph_.get(), stream_.get()), "launching a background run");
    else
      queue_transfers(0, iterations_, false);
  }
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

void TransferTimer::enqueue_gated(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s,
                                  bool stamped, const Beside& beside) {
  window_.open(gate, heartbeat, ungated_ ? 0 : ticket, gate_timeout_s, beside);  // ticket 0: always open
  if (!captured()) {  // the transfers (a queued sample's rest) go in wait(), once the gate has opened
    host_stamped_ = stamped;
    if (feeding_ == Feeding::kQueued) {  // as many as the launch queue holds behind the closed gate
      const uint64_t ahead = std::max<uint64_t>(1, kQueuedAheadCommands / commands_per_transfer_);
      queued_ahead_ = std::min(ahead, stamped ? stamped_iterations_ : iterations_);
      queue_transfers(0, queued_ahead_, stamped);
    }
    return;
  }
  cuda_check(cudaGraphLaunch(stamped ? stamped_graph_.get() : graph_.get(), stream_.get()), "launching a sample");
  window_.close();
}

TransferTimer::Sample TransferTimer::wait(double deadline_s, const std::string& what) {
  if (feeding_ == Feeding::kHostDriven) return wait_host_driven(deadline_s, what);
  if (feeding_ == Feeding::kQueued) return wait_queued(deadline_s, what);
  return window_.wait(deadline_s, what);
}

// The rest of the sample once the gate opened (the start event after the gate kernel is its
// release), then the same end as a graph's.
TransferTimer::Sample TransferTimer::wait_queued(double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  window_.wait_open(deadline, what);
  queue_transfers(queued_ahead_, host_stamped_ ? stamped_iterations_ : iterations_, host_stamped_);
  window_.close();
  return window_.wait(deadline, what);
}

void TransferTimer::queue_transfers(uint64_t from, uint64_t to, bool stamped) {
  auto record = [&](uint64_t k) {
    cuda_check(cudaEventRecord(transfer_events_[k].get(), stream_.get()), "recording a transfer's timing event");
  };
  for (uint64_t i = from; i < to; ++i) {
    if (stamped && i == 0) record(0);
    host_enqueue_(i, stream_.get());
    if (stamped) record(i + 1);
  }
}

// Each call may block the host (synchronous I/O) and leave work on the stream; the stream is
// drained (with a deadline) after the last call, or after each one for per-transfer times.
double TransferTimer::run_host_driven(uint64_t count, double deadline_s, const std::string& what,
                                      std::vector<double>* per_transfer_ms) {
  if (!host_enqueue_) throw std::logic_error("a host-driven sample was run before its transfers were set");
  auto drain = [&](Clock::time_point t0) {
    cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording the end of host-driven transfers");
    wait_for_event(stop_.get(), std::max(1e-3, deadline_s - seconds_since(t0)), what);
  };
  const auto t0 = Clock::now();
  auto previous = t0;
  for (uint64_t i = 0; i < count; ++i) {
    if (seconds_since(t0) > deadline_s)
      throw RuntimeFailure(what + ": " + std::to_string(i) + " of " + std::to_string(count) +
                           " host-driven transfers done after " + std::to_string(deadline_s) + " s");
    host_enqueue_(i, stream_.get());
    if (per_transfer_ms) {
      drain(t0);
      const auto now = Clock::now();
      per_transfer_ms->push_back(std::chrono::duration<double, std::milli>(now - previous).count());
      previous = now;
    }
  }
  if (!per_transfer_ms) drain(t0);
  return seconds_since(t0) * 1e3;
}

// The gate kernel's completion (the start event after it) is the release; the transfers run
// then, and the end stamp follows their work on the stream. The sample's time is the host's:
// the window's events only say when the stamp is written.
// The transfers' own part keeps the wall clock: a host call may block for seconds of I/O, which
// a running-time deadline would take for a pause.
TransferTimer::Sample TransferTimer::wait_host_driven(double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  window_.wait_open(deadline, what);
  host_transfer_ms_.clear();
  const uint64_t count = host_stamped_ ? stamped_iterations_ : iterations_;
  const double ms = run_host_driven(count, std::max(1e-3, deadline.left_s()), what,
                                    host_stamped_ ? &host_transfer_ms_ : nullptr);
  window_.close_stamp_first();
  Sample sample = window_.wait(10.0 * timeout_scale_, what);  // the drained stream has only the stamp left
  sample.elapsed_ms = ms;
  return sample;
}

}  // namespace p2pbench
