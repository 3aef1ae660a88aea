// The parts of a gated phase of an interference sample: the windows of every end of the transfer
// one rank runs (each stream's a GatedWindow, measure/gated_window.hpp), and the workload feeder
// that keeps launching the workload until the transfer's window has closed, with only a few
// launches queued ahead so that the workload's window ends soon after.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "measure/gated_window.hpp"

namespace p2pbench {

// The windows of every end of the transfer one rank runs, a stream each (put with signal both
// ways: the sender and the receiver of the other flow), opened by one gate and read as one.
class GatedWindows {
 public:
  GatedWindows(const std::vector<cudaStream_t>& streams, const std::string& what);
  bool empty() const { return windows_.empty(); }
  cudaStream_t stream(size_t i) const { return windows_.at(i)->stream(); }
  size_t size() const { return windows_.size(); }
  void open(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s);
  void close();
  // Whether every window's work up to close() has run.
  bool closed_and_done() const;
  void wait_open(double deadline_s);
  // The longest of each figure (longest_of): the ends' work ends when the last of them does.
  WindowFigures wait(double deadline_s);

 private:
  std::vector<std::unique_ptr<GatedWindow>> windows_;
};

// Keeps a workload running on its window's stream: `launch` enqueues one launch. At most
// `ahead` launches are queued at a time; the feeder stops once `keep_going()` turns false.
class WorkloadFeeder {
 public:
  WorkloadFeeder(cudaStream_t stream, int ahead, std::function<void(cudaStream_t)> launch);
  // Queues the first `ahead` launches (behind the closed gate).
  void prime();
  // Tops the queue up while keep_going() holds; returns the launches made. Throws after
  // deadline_s seconds.
  uint64_t feed_while(const std::function<bool()>& keep_going, double deadline_s);
  uint64_t launches() const { return launched_; }

 private:
  void launch_one();
  cudaStream_t stream_;
  std::function<void(cudaStream_t)> launch_;
  std::vector<Event> done_;  // ring: done_[i % ahead] follows launch i
  uint64_t launched_ = 0;
};

// Median of kSingleTimings event-timed, ungated launches of `enqueue` on `stream`, in ms (calibration).
inline constexpr int kSingleTimings = 3;
double time_single_ms(cudaStream_t stream, const std::function<void(cudaStream_t)>& enqueue, double deadline_s);

// What one rank reports from a gated phase: the part it ran (a transfer it drove, the workload
// on its GPU), each timed by its stream's events and its window from the gate's release.
struct PhaseFigures {
  bool transfer = false;
  double transfer_ms = 0;
  double transfer_window_ns = 0;
  bool workload = false;
  double workload_ms = 0;
  double workload_window_ns = 0;  // the together phase only
  double workload_launches = 0;

  void set_transfer(const WindowFigures& f) {
    transfer = true;
    transfer_ms = f.elapsed_ms;
    transfer_window_ns = f.window_ns;
  }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PhaseFigures, transfer, transfer_ms, transfer_window_ns, workload,
                                                workload_ms, workload_window_ns, workload_launches)

// Figures of one gated phase from every rank's report.
// Transfer GB/s: `bytes`, what every flow of the case carried. One flow driven by one end (a
// copy one way): that rank's events; otherwise (both ways, a collective's every pair, or a
// transfer whose receiver runs too, as put with signal: its bytes have moved when the last end's
// window closed, as the case loop times such flows) over the longest window (every window
// starts at the gate's release).
double transfer_gbps(const std::vector<PhaseFigures>& ranks, double bytes, bool one_flow_one_end);
double longest_transfer_window_ns(const std::vector<PhaseFigures>& ranks);
// The workload's figure: per GPU, the mean over the GPUs that ran it.
double workload_figure(const std::vector<PhaseFigures>& ranks, double work_per_launch);
double most_workload_launches(const std::vector<PhaseFigures>& ranks);
// Every window of the together phase starts at the gate's release, so the overlap
// (intersection over union) is the shortest window over the longest.
double overlap_of(const std::vector<PhaseFigures>& ranks);

}  // namespace p2pbench
