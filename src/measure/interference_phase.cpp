#include "measure/interference_phase.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/errors.hpp"
#include "common/event_wait.hpp"

namespace p2pbench {

GatedWindows::GatedWindows(const std::vector<cudaStream_t>& streams, const std::string& what) {
  for (size_t i = 0; i < streams.size(); ++i)
    windows_.push_back(std::make_unique<GatedWindow>(streams[i], what + (i ? " (end " + std::to_string(i + 1) + ")" : "")));
}

void GatedWindows::open(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s) {
  for (auto& w : windows_) w->open(gate, heartbeat, ticket, gate_timeout_s);
}

void GatedWindows::close() {
  for (auto& w : windows_) w->close();
}

void GatedWindows::wait_open(double deadline_s) {
  for (auto& w : windows_) w->wait_open(deadline_s);
}

bool GatedWindows::closed_and_done() const {
  return std::all_of(windows_.begin(), windows_.end(), [](const auto& w) { return w->closed_and_done(); });
}

WindowFigures GatedWindows::wait(double deadline_s) {
  std::vector<WindowFigures> figures;
  for (auto& w : windows_) figures.push_back(w->wait(deadline_s));
  return longest_of(figures);
}

WorkloadFeeder::WorkloadFeeder(cudaStream_t stream, int ahead, std::function<void(cudaStream_t)> launch)
    : stream_(stream), launch_(std::move(launch)) {
  for (int i = 0; i < ahead; ++i) done_.push_back(make_event("a workload launch's end"));
}

void WorkloadFeeder::launch_one() {
  launch_(stream_);
  cuda_check(cudaEventRecord(done_[launched_ % done_.size()].get(), stream_), "recording a workload launch's end");
  ++launched_;
}

void WorkloadFeeder::prime() {
  for (size_t i = 0; i < done_.size(); ++i) launch_one();
}

uint64_t WorkloadFeeder::feed_while(const std::function<bool()>& keep_going, double deadline_s) {
  RunningDeadline deadline(deadline_s);
  while (keep_going()) {
    // The oldest queued launch has finished: its slot in the ring is free.
    const cudaError_t err = cudaEventQuery(done_[launched_ % done_.size()].get());
    if (err == cudaSuccess) {
      launch_one();
      continue;
    }
    if (err != cudaErrorNotReady) cuda_check(err, "polling a workload launch");
    if (deadline.passed())
      throw RuntimeFailure("timed out after " + std::to_string(deadline_s) + " s feeding the workload beside the transfer");
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return launched_;
}

double time_single_ms(cudaStream_t stream, const std::function<void(cudaStream_t)>& enqueue, double deadline_s) {
  Event start = make_event("a calibration start"), stop = make_event("a calibration stop");
  std::vector<double> ms;
  for (int i = 0; i < kSingleTimings; ++i) {
    cuda_check(cudaEventRecord(start.get(), stream), "recording a calibration start");
    enqueue(stream);
    cuda_check(cudaEventRecord(stop.get(), stream), "recording a calibration stop");
    wait_for_event(stop.get(), deadline_s, "a calibration launch");
    float elapsed = 0;
    cuda_check(cudaEventElapsedTime(&elapsed, start.get(), stop.get()), "reading a calibration time");
    ms.push_back(elapsed);
  }
  std::sort(ms.begin(), ms.end());
  return std::max(1e-4, ms[1]);
}

double longest_transfer_window_ns(const std::vector<PhaseFigures>& ranks) {
  double longest = 0;
  for (const PhaseFigures& r : ranks)
    if (r.transfer) longest = std::max(longest, r.transfer_window_ns);
  return longest;
}

double transfer_gbps(const std::vector<PhaseFigures>& ranks, double bytes, bool one_flow_one_end) {
  if (one_flow_one_end)
    for (const PhaseFigures& r : ranks)
      if (r.transfer) return bytes / (r.transfer_ms * 1e-3) / 1e9;
  return bytes / (longest_transfer_window_ns(ranks) * 1e-9) / 1e9;
}

double workload_figure(const std::vector<PhaseFigures>& ranks, double work_per_launch) {
  double sum = 0;
  int gpus = 0;
  for (const PhaseFigures& r : ranks)
    if (r.workload) {
      sum += r.workload_launches * work_per_launch / (r.workload_ms * 1e-3);
      ++gpus;
    }
  return gpus ? sum / gpus : 0.0;
}

double most_workload_launches(const std::vector<PhaseFigures>& ranks) {
  double most = 0;
  for (const PhaseFigures& r : ranks)
    if (r.workload) most = std::max(most, r.workload_launches);
  return most;
}

double overlap_of(const std::vector<PhaseFigures>& ranks) {
  std::vector<double> windows;
  for (const PhaseFigures& r : ranks) {
    if (r.transfer) windows.push_back(r.transfer_window_ns);
    if (r.workload) windows.push_back(r.workload_window_ns);
  }
  if (windows.empty()) return 0.0;
  const auto [shortest, longest] = std::minmax_element(windows.begin(), windows.end());
  return *longest > 0 ? *shortest / *longest : 0.0;
}

}  // namespace p2pbench
