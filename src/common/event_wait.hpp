// A host wait for a CUDA event or stream with a deadline: every wait for work on a stream ends,
// either with the work done or with a RuntimeFailure naming what it waited for. Deadlines count the
// time the process ran (common/running_deadline.hpp): a job suspended and resumed as a whole does
// not time out for work that finishes once it runs again. A device-wide synchronize has no query
// to poll; the few that remain (before buffers are freed, between cases) and latency_ce's timed
// round trip (a poll would add its period to the figure) run in regions of the watchdog
// (common/watchdog.hpp), which ends the process when one hangs. Copies of a few words of a result
// wait here too (common/bounded_copier.hpp).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <string>

#include "common/running_deadline.hpp"

namespace p2pbench {

// Seconds of the steady clock since `t0`: how long a step took on the wall clock (the polls below
// count running time instead).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The bound on local work that ends on its own (a fill, a poison, a check, a set-up launch, a copy
// to the host): milliseconds at the largest sizes, seconds under a sanitizer. It is there for a GPU
// that stopped, so it is far above either.
inline constexpr double kLocalWorkWaitS = 300.0;

// Polls `event` until it completes; throws RuntimeFailure after `deadline_s` seconds.
void wait_for_event(cudaEvent_t event, double deadline_s, const std::string& what);
// The same within what is left of `deadline`, for a step of several waits under one deadline.
void wait_for_event(cudaEvent_t event, RunningDeadline& deadline, const std::string& what);

// Polls `stream` until its work has run; throws RuntimeFailure after `deadline_s` seconds (a
// stream of a green context too: no device-wide synchronize).
void wait_for_stream(cudaStream_t stream, double deadline_s, const std::string& what);
void wait_for_stream(cudaStream_t stream, RunningDeadline& deadline, const std::string& what);
// The same poll without throwing (teardown): the last answer, cudaErrorNotReady where the work
// still ran at the deadline.
cudaError_t poll_stream(cudaStream_t stream, double deadline_s);

}  // namespace p2pbench
