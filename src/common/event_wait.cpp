#include "common/event_wait.hpp"

#include <chrono>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace p2pbench {

namespace {

bool not_ready(cudaError_t err) { return err == cudaErrorNotReady; }

// Asks `query` without sleeping for the first kSpin, as a spinning cudaStreamSynchronize does, then
// every poll_until interval: most waits end within the spin, and a thread that sleeps on a node
// whose cores are all busy (ranks spinning, tests beside it) can wait a scheduler tick to run
// again, milliseconds a wait.
template <class Query>
cudaError_t poll_cuda(const Query& query, RunningDeadline& deadline) {
  constexpr auto kSpin = std::chrono::milliseconds(2);
  const auto spin_until = std::chrono::steady_clock::now() + kSpin;
  cudaError_t answer = query();
  while (not_ready(answer) && std::chrono::steady_clock::now() < spin_until) answer = query();
  return not_ready(answer) ? poll_until(query, not_ready, deadline) : answer;
}

// A poll's last answer as a wait's outcome: a timeout or a CUDA error, both naming `what`.
void finish_wait(cudaError_t err, double deadline_s, const std::string& what) {
  if (err == cudaErrorNotReady)
    throw RuntimeFailure("timed out after " + std::to_string(deadline_s) + " s waiting for " + what);
  cuda_check(err, "waiting for " + what);
}

}  // namespace

void wait_for_event(cudaEvent_t event, RunningDeadline& deadline, const std::string& what) {
  finish_wait(poll_cuda([event] { return cudaEventQuery(event); }, deadline), deadline.seconds(), what);
}

void wait_for_event(cudaEvent_t event, double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  wait_for_event(event, deadline, what);
}

cudaError_t poll_stream(cudaStream_t stream, double deadline_s) {
  RunningDeadline deadline(deadline_s);
  return poll_cuda([stream] { return cudaStreamQuery(stream); }, deadline);
}

void wait_for_stream(cudaStream_t stream, RunningDeadline& deadline, const std::string& what) {
  finish_wait(poll_cuda([stream] { return cudaStreamQuery(stream); }, deadline), deadline.seconds(), what);
}

void wait_for_stream(cudaStream_t stream, double deadline_s, const std::string& what) {
  RunningDeadline deadline(deadline_s);
  wait_for_stream(stream, deadline, what);
}

}  // namespace p2pbench
