#include "measure/gated_window.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/event_wait.hpp"

namespace p2pbench {

WindowFigures window_figures(const kernels::GateStamps& stamps, double elapsed_ms) {
  return {elapsed_ms, double(stamps.end_ns - stamps.release_ns), double(stamps.release_ns), double(stamps.end_ns)};
}

void throw_if_gate_gave_up(const kernels::GateStamps& stamps, double gate_timeout_s, const std::string& what) {
  if (stamps.timed_out)
    throw RuntimeFailure("the start gate of " + what + " never opened within " + std::to_string(gate_timeout_s) + " s");
}

WindowFigures longest_of(const std::vector<WindowFigures>& windows) {
  if (windows.empty()) return {};
  WindowFigures longest = windows.front();
  for (const WindowFigures& f : windows) {
    longest.elapsed_ms = std::max(longest.elapsed_ms, f.elapsed_ms);
    longest.window_ns = std::max(longest.window_ns, f.window_ns);
    longest.release_ns = std::min(longest.release_ns, f.release_ns);
    longest.end_ns = std::max(longest.end_ns, f.end_ns);
  }
  return longest;
}

GatedWindow::GatedWindow(cudaStream_t stream, const std::string& what)
    : stream_(stream),
      name_("the " + what + " window"),
      start_(make_event("the start of " + name_)),
      stop_(make_event("the end of " + name_)),
      stamps_(sizeof(kernels::GateStamps), "the time stamps of " + name_) {}

GatedWindow::~GatedWindow() {
  constexpr double kDrainDeadlineS = 60.0;  // longer than any gate timeout; an error ends it at once
  poll_stream(stream_, kDrainDeadlineS);
  cudaGetLastError();  // a failed query was reported by whoever failed first
}

// The stamps are cleared from the host before the gate kernel that writes them is queued: the
// previous window's (a give-up included) must not be read as this one's.
void GatedWindow::open(const uint32_t* gate, const uint64_t* heartbeat, uint32_t ticket, double gate_timeout_s,
                       const Beside& beside) {
  auto* host = static_cast<kernels::GateStamps*>(stamps_.host());
  *host = {0, 0, 0, 0};
  gate_timeout_s_ = gate_timeout_s;
  closed_ = false;
  kernels::enqueue_gate_wait(gate, ticket, uint64_t(gate_timeout_s * 1e9), heartbeat,
                             static_cast<kernels::GateStamps*>(stamps_.device()), stream_);
  if (beside) beside(stream_, stop_.get());
  cuda_check(cudaEventRecord(start_.get(), stream_), "recording the start of " + name_);
}

void GatedWindow::close() {
  cuda_check(cudaEventRecord(stop_.get(), stream_), "recording the end of " + name_);
  kernels::enqueue_end_stamp(static_cast<kernels::GateStamps*>(stamps_.device()), stream_);
  closed_ = true;
}

void GatedWindow::close_stamp_first() {
  kernels::enqueue_end_stamp(static_cast<kernels::GateStamps*>(stamps_.device()), stream_);
  cuda_check(cudaEventRecord(stop_.get(), stream_), "recording the event after the end stamp of " + name_);
  closed_ = true;
}

bool GatedWindow::closed_and_done() const {
  if (!closed_) return false;
  const cudaError_t err = cudaEventQuery(stop_.get());
  if (err == cudaErrorNotReady) return false;
  cuda_check(err, "polling the end of " + name_);
  return true;
}

// The start event follows the gate kernel on the stream: once it completed, the kernel's stamps
// are written, released or given up.
void GatedWindow::wait_open(RunningDeadline& deadline, const std::string& what) {
  wait_for_event(start_.get(), deadline, "the start gate of " + what);
  throw_if_gate_gave_up(stamps(), gate_timeout_s_, what);
}

// After close() the end stamp, one small kernel, is still queued behind the stop event; after
// close_stamp_first() the stream is already drained when the stop event completed.
WindowFigures GatedWindow::wait(RunningDeadline& deadline, const std::string& what) {
  if (!closed_) throw std::logic_error("waited for " + what + " before it was closed");
  wait_for_event(stop_.get(), deadline, "the end of " + what);
  wait_for_stream(stream_, deadline, "the end stamp of " + what);
  throw_if_gate_gave_up(stamps(), gate_timeout_s_, what);
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "reading the time of " + what);
  return window_figures(stamps(), double(ms));
}

}  // namespace p2pbench
