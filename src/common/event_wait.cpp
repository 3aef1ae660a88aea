#include "common/event_wait.hpp"

#include <chrono>
#include <thread>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace p2pbench {

namespace {

// Asks `query` until it answers other than cudaErrorNotReady or `deadline_s` seconds passed;
// returns the last answer.
template <class Query>
cudaError_t poll(const Query& query, double deadline_s) {
  const auto t0 = std::chrono::steady_clock::now();
  cudaError_t err = query();
  while (err == cudaErrorNotReady && seconds_since(t0) <= deadline_s) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    err = query();
  }
  return err;
}

// A poll's last answer as a wait's outcome: a timeout or a CUDA error, both naming `what`.
void finish_wait(cudaError_t err, double deadline_s, const std::string& what) {
  if (err == cudaErrorNotReady)
    throw RuntimeFailure("timed out after " + std::to_string(deadline_s) + " s waiting for " + what);
  cuda_check(err, "waiting for " + what);
}

}  // namespace

void wait_for_event(cudaEvent_t event, double deadline_s, const std::string& what) {
  finish_wait(poll([event] { return cudaEventQuery(event); }, deadline_s), deadline_s, what);
}

cudaError_t poll_stream(cudaStream_t stream, double deadline_s) {
  return poll([stream] { return cudaStreamQuery(stream); }, deadline_s);
}

void wait_for_stream(cudaStream_t stream, double deadline_s, const std::string& what) {
  finish_wait(poll_stream(stream, deadline_s), deadline_s, what);
}

}  // namespace p2pbench
