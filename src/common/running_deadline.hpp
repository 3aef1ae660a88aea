// A deadline counted in the time this process ran, for host waits that poll: a job suspended as a
// whole (SIGSTOP, Slurm's suspend) and resumed later has spent none of it, so a wait that was
// inside the pause does not time out for work that finishes once every rank runs again. The
// poller's ticks measure it (common/running_time.hpp): a gap between two ticks longer than
// kPauseGapS counts as a pause, so a poll must tick well within that (a call between two ticks
// that blocks longer is not counted either; the watchdog bounds those).
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/running_time.hpp"

namespace p2pbench {

class RunningDeadline {
 public:
  explicit RunningDeadline(double seconds) : seconds_(seconds) {}

  // Counts the running time since the last tick and says whether the deadline has passed.
  bool passed() {
    if (const auto gap = clock_.since_last()) spent_s_ += *gap;
    return spent_s_ > seconds_;
  }
  // Running seconds left (0 once passed), after a tick.
  double left_s() {
    passed();
    return std::max(0.0, seconds_ - spent_s_);
  }
  double seconds() const { return seconds_; }

 private:
  double seconds_;
  double spent_s_ = 0;
  RunningTime clock_;
};

// Asks `query` until `pending(answer)` is false or `deadline` has passed, a tick every `interval`;
// returns the last answer.
template <class Query, class Pending>
auto poll_until(const Query& query, const Pending& pending, RunningDeadline& deadline,
                std::chrono::microseconds interval = std::chrono::microseconds(20)) -> decltype(query()) {
  auto answer = query();
  while (pending(answer) && !deadline.passed()) {
    std::this_thread::sleep_for(interval);
    answer = query();
  }
  return answer;
}

}  // namespace p2pbench
