#include "common/event_wait.hpp"

#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace p2pbench {

namespace {

bool not_ready(cudaError_t err) { return err == cudaErrorNotReady; }

// A poll's last answer as a wait's outcome: a timeout or a CUDA error, both naming `what`.
void finish_wait(cudaError_t err, double deadline_s, const std::string& what) {
  if (err == cudaErrorNotReady)
    throw RuntimeFailure("timed out after " + std::to_string(deadline_s) + " s waiting for " + what);
  cuda_check(err, "waiting for " + what);
}

}  // namespace

void wait_for_event(cudaEvent_t event, RunningDeadline& deadline, const std::string& what) {
  finish_wait(poll_until([event] { return cudaEventQuery(event); }, not_ready, deadline), deadline.seconds(), what);
}

void wait_for_event(cudaEvent_t event, double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  wait_for_event(event, deadline, what);
}

cudaError_t poll_stream(cudaStream_t stream, double deadline_s) {
  RunningDeadline deadline(deadline_s);
  return poll_until([stream] { return cudaStreamQuery(stream); }, not_ready, deadline);
}

void wait_for_stream(cudaStream_t stream, RunningDeadline& deadline, const std::string& what) {
  finish_wait(poll_until([stream] { return cudaStreamQuery(stream); }, not_ready, deadline), deadline.seconds(), what);
}

void wait_for_stream(cudaStream_t stream, double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  wait_for_stream(stream, deadline, what);
}

void spin_on_stream(cudaStream_t stream, double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  const auto query = [stream] { return cudaStreamQuery(stream); };
  finish_wait(poll_until(query, not_ready, deadline, std::chrono::microseconds(0)), deadline.seconds(), what);
}

}  // namespace p2pbench
