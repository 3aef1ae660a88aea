// The measurement loop of one stream: calibration, a CUDA graph of N transfers, warm-up, and
// gated samples timed with CUDA events plus %globaltimer stamps. No MPI: the two-rank runner
// and the single-process Google Benchmark front-end share it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "measure/gated_window.hpp"
#include "vocab/feeding.hpp"

namespace p2pbench {

class TransferTimer {
 public:
  // Enqueues transfer number `index` of a sample on `stream` (the index picks a pool slot).
  using EnqueueTransfer = std::function<void(uint64_t index, cudaStream_t stream)>;

  // A sample's figures: elapsed_ms from CUDA events around its transfers (host-driven: the
  // host's clock), its window and stamps on this GPU's timer (measure/gated_window.hpp).
  using Sample = WindowFigures;

  // `ungated`: samples start at once instead of behind the gate (sanitizer mode: no kernel may
  // wait for the host there).
  explicit TransferTimer(double timeout_scale = 1.0, bool ungated = false);
  // Bound of one ungated wait (calibration, warm-up), in seconds before scaling.
  static constexpr double kUngatedWaitS = 60.0;

  cudaStream_t stream() const { return stream_.get(); }

  // How the transfers reach the GPU (vocab/feeding.hpp), set for each case before calibrating:
  //   kCaptured    the sample is one CUDA graph of its transfers;
  //   kQueued      each sample queues its transfers one by one: behind the closed gate as many as
  //                keep the gated stream under kQueuedAheadCommands (`commands` per transfer, at
  //                least one transfer), the rest once the host saw the gate open; timed with events;
  //   kHostDriven  each sample calls `enqueue` once per transfer after the gate opened, waits for the
  //                stream's work after the last (after each, in a stamped sample), and is timed with
  //                the host's steady clock; its window still runs on the GPU's timer, from the gate
  //                kernel's release stamp to an end stamp after the work.
  void set_feeding(Feeding feeding, uint64_t commands_per_transfer = 1);
  Feeding feeding() const { return feeding_; }
  // Commands a kQueued sample may queue behind the closed gate: half of the 1020 one stream takes
  // before the host blocks (an H200, tools/probes/queue_depth_probe.cpp).
  static constexpr uint64_t kQueuedAheadCommands = 512;

  // One ungated transfer's time, in ms: the mean of kCalibrationLaunches back to back, after an
  // untimed first one.
  static constexpr int kCalibrationLaunches = 3;
  double time_single_ms(const EnqueueTransfer& enqueue);
  // Transfers per sample so that a sample lasts at least `min_sample_ms` (capped).
  static uint64_t iterations_for(double single_ms, double min_sample_ms);

  // Captures `iterations` transfers into one graph: the work queued behind the gate is then a
  // single launch, so the host never blocks in a full launch queue while the gate is closed.
  void build(const EnqueueTransfer& enqueue, uint64_t iterations);
  uint64_t iterations() const { return iterations_; }
  // The same transfers with a timing event before the first and after each one (event record
  // nodes in the graph): the stamped sample that gives one time per transfer, for the tails.
  // Kept apart from the samples: an event between transfers costs about a microsecond, which
  // would weigh on small transfers' figures.
  void build_stamped(const EnqueueTransfer& enqueue, uint64_t iterations);
  // Drops the sample graphs. A graph that captured NCCL operations holds a reference on the NCCL
  // communicator, whose destruction waits (forever) until the graph is gone.
  void release_graph() {
    graph_ = GraphExec();
    stamped_graph_ = GraphExec();
  }
  // Replays the graph, ungated, until `ms` milliseconds have passed (at least once).
  void warm_up(double ms);
  // Replays the graph `launches` times, ungated. Two-sided methods need this form: both ends
  // must run the same number of transfers, which a per-rank clock cannot promise.
  void warm_up_launches(uint64_t launches);
  // Launches of a sample graph of `iterations` transfers of `single_ms` that fill `warmup_ms`.
  static uint64_t warmup_launches_for(double single_ms, uint64_t iterations, double warmup_ms);

  // A background run (a load beside another measurement): `launches` replays of the graph,
  // ungated, between two events. running(): not finished yet; finish_run() waits (deadline in
  // seconds) and returns the run's milliseconds.
  void start_run(uint64_t launches);
  bool running() const;
  double finish_run(double deadline_s, const std::string& what);

  // Queues one sample behind the gate word (device-visible): a spin kernel holds the stream
  // until *gate >= ticket, or gives up after gate_timeout_s counted while `heartbeat` moves
  // (reported by wait()).
  // `stamped`: the stamped graph (build_stamped) instead of the sample graph. `beside`: queues
  // untimed work (TransferEngine::enqueue_beside), given the stream and the sample's end event,
  // after the gate wait and before the sample's start is recorded.
  using Beside = GatedWindow::Beside;
  void enqueue_gated(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s,
                     bool stamped = false, const Beside& beside = {});
  // Waits for the queued sample (deadline in seconds) and returns its figures.
  Sample wait(double deadline_s, const std::string& what);
  // After wait() of a stamped sample: each transfer's time, in ms, in the order they ran.
  std::vector<double> transfer_times_ms() const;

 private:
  // One replay of the graph, waited for (the body of both warm-ups).
  void replay_ungated();
  // The host-driven path: `count` transfers called one after another, the stream drained after
  // the last (after each where `per_transfer_ms` is given, which then gets each one's time);
  // returns the host milliseconds from the first call to the drained stream.
  double run_host_driven(uint64_t count, double deadline_s, const std::string& what,
                         std::vector<double>* per_transfer_ms);
  Sample wait_host_driven(double deadline_s, const std::string& what);
  // kQueued: transfers [from, to) on the stream, each followed by its timing event when `stamped`
  // (the first preceded by one).
  void queue_transfers(uint64_t from, uint64_t to, bool stamped);
  Sample wait_queued(double deadline_s, const std::string& what);
  bool captured() const { return feeding_ == Feeding::kCaptured; }
  // Captures `iterations` transfers on the stream; `after(i)` runs after transfer i is enqueued.
  GraphExec capture(const EnqueueTransfer& enqueue, uint64_t iterations, const std::function<void(uint64_t)>& after);

  double timeout_scale_;
  bool ungated_;
  Stream stream_;
  Event start_, stop_;  // the ungated runs' (calibration, warm-up, background run, host drain)
  GraphExec graph_;
  GraphExec stamped_graph_;
  std::vector<Event> transfer_events_;  // the stamped graph's: before transfer 0, after each
  uint64_t stamped_iterations_ = 0;
  uint64_t iterations_ = 0;
  Feeding feeding_ = Feeding::kCaptured;
  uint64_t commands_per_transfer_ = 1;
  EnqueueTransfer host_enqueue_;             // not captured: what build() would have captured
  bool host_stamped_ = false;                // not captured: the queued sample is the stamped one
  uint64_t queued_ahead_ = 0;                // kQueued: the sample's transfers queued behind the gate
  std::vector<double> host_transfer_ms_;     // host-driven: the stamped sample's per-transfer times
  // The gated samples' window. Last: it goes first, and its destructor drains the stream (the gate
  // kernel and end stamp write its stamps) while the stream, graphs and events are still there.
  GatedWindow window_;
};

}  // namespace p2pbench
