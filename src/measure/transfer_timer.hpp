// The measurement loop of one stream: calibration, a CUDA graph of N transfers, warm-up, and
// gated samples timed with CUDA events plus %globaltimer stamps. No MPI: the two-rank runner
// and the single-process Google Benchmark front-end share it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "kernels/gate_kernels.hpp"

namespace p2pbench {

class TransferTimer {
 public:
  // Enqueues transfer number `index` of a sample on `stream` (the index picks a pool slot).
  using EnqueueTransfer = std::function<void(uint64_t index, cudaStream_t stream)>;

  struct Sample {
    double elapsed_ms;  // CUDA events around the sample's transfers
    double window_ns;   // this GPU's timer, from the gate's release to the end of the work
    double release_ns;  // that timer when this stream saw the release (absolute: comparable only
    double end_ns;      // between streams of one GPU, whatever process they belong to)
  };

  // `ungated`: samples start at once instead of behind the gate (sanitizer mode: no kernel may
  // wait for the host there).
  explicit TransferTimer(double timeout_scale = 1.0, bool ungated = false);
  // Bound of one ungated wait (calibration, warm-up), in seconds before scaling.
  static constexpr double kUngatedWaitS = 60.0;

  cudaStream_t stream() const { return stream_.get(); }

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
  // Drops the sample graph. A graph that captured NCCL operations holds a reference on the NCCL
  // communicator, whose destruction waits (forever) until the graph is gone.
  void release_graph() { graph_ = GraphExec(); }
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
  void enqueue_gated(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s);
  // Waits for the queued sample (deadline in seconds) and returns its figures.
  Sample wait(double deadline_s, const std::string& what);

 private:
  // One replay of the graph, waited for (the body of both warm-ups).
  void replay_ungated();

  double timeout_scale_;
  bool ungated_;
  Stream stream_;
  Event start_, stop_;
  MappedHostBuffer stamps_;
  GraphExec graph_;
  uint64_t iterations_ = 0;
  double gate_timeout_s_ = 0;
};

}  // namespace p2pbench
