// One stream's gated window: work queued behind the shared start gate, timed from the gate's
// release to the end of the work, with the stream's own CUDA events and this GPU's %globaltimer
// (the gate kernel stamps the release, an end-stamp kernel the end). The case loop's timer
// (TransferTimer) times each sample in one; an interference phase gives each stream it drives one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"
#include "common/running_deadline.hpp"
#include "kernels/gate_kernels.hpp"

namespace p2pbench {

struct WindowFigures {
  double elapsed_ms = 0;  // CUDA events around the stream's work
  double window_ns = 0;   // this GPU's timer, from the gate's release to the end of the work
  double release_ns = 0;  // that timer when this stream saw the release (absolute: comparable only
  double end_ns = 0;      // between streams of one GPU, whatever process they belong to)
};

// The figures of a window whose stamps were written and whose events are `elapsed_ms` apart.
WindowFigures window_figures(const kernels::GateStamps& stamps, double elapsed_ms);
// Throws where the gate kernel gave up waiting for its ticket (`stamps` say so); `what` names
// the window, `gate_timeout_s` is the timeout it was given.
void throw_if_gate_gave_up(const kernels::GateStamps& stamps, double gate_timeout_s, const std::string& what);
// Windows opened by one gate and read as one (every end of a transfer): the longest of elapsed_ms
// and window_ns (each may come from another window: the work has ended when the last window
// closed), from the earliest release to the latest end. No windows: all zero.
WindowFigures longest_of(const std::vector<WindowFigures>& windows);

class GatedWindow {
 public:
  // `stream`: not owned, and must outlive the window. `what` names the window in errors
  // ("the <what> window").
  GatedWindow(cudaStream_t stream, const std::string& what);
  // Waits (bounded) for work still queued on the stream: the gate kernel and the end stamp write
  // into memory this object owns. Where a case ended early, a window may still be pending here.
  ~GatedWindow();
  GatedWindow(const GatedWindow&) = delete;
  GatedWindow& operator=(const GatedWindow&) = delete;
  cudaStream_t stream() const { return stream_; }

  // Queues untimed work after the gate wait and before the start event, given the stream and the
  // window's stop event (TransferEngine::enqueue_beside).
  using Beside = std::function<void(cudaStream_t stream, cudaEvent_t stop)>;
  // Queues the gate wait (released by `ticket`; 0 is always open, the kernel then only stamps the
  // release), `beside` where given, and the start event: work queued next is timed. The gate gives
  // up after gate_timeout_s counted while `heartbeat` moves (reported by wait_open() and wait()).
  void open(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s,
            const Beside& beside = {});
  // Queues the stop event and the end stamp after the work queued since open().
  void close();
  // Queues the end stamp, then the stop event: for work the host timed itself (host-driven
  // feeding), where the stop event only tells the host that the stamp is written.
  void close_stamp_first();
  // Whether everything up to the close has run (false before it).
  bool closed_and_done() const;
  // Waits (deadline in seconds, or what is left of a step's deadline) until the gate opened: work
  // queued after this never waited behind the closed gate. Throws where the gate gave up. `what`
  // names the window in errors.
  void wait_open(double deadline_s) { wait_open(deadline_s, name_); }
  void wait_open(double deadline_s, const std::string& what) {
    RunningDeadline deadline(deadline_s);
    wait_open(deadline, what);
  }
  void wait_open(RunningDeadline& deadline, const std::string& what);
  // Waits for the window's end (the stop event, then the end stamp, both within the deadline) and
  // returns its figures; throws where the gate never opened.
  WindowFigures wait(double deadline_s) { return wait(deadline_s, name_); }
  WindowFigures wait(double deadline_s, const std::string& what) {
    RunningDeadline deadline(deadline_s);
    return wait(deadline, what);
  }
  WindowFigures wait(RunningDeadline& deadline, const std::string& what);

 private:
  const kernels::GateStamps& stamps() const { return *static_cast<const kernels::GateStamps*>(stamps_.host()); }
  cudaStream_t stream_;
  std::string name_;  // "the <what> window"
  Event start_, stop_;
  MappedHostBuffer stamps_;
  double gate_timeout_s_ = 0;
  bool closed_ = false;
};

}  // namespace p2pbench
