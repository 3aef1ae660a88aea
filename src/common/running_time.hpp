// Time a process ran, for deadlines kept by a thread that wakes every kDeadlineTick (the end of
// run's deadline, the watchdog): a gap between two wakes longer than kPauseGapS means the process
// was stopped (SIGSTOP, a debugger, a frozen job), and no time passed for it.
#pragma once

#include <chrono>
#include <optional>

namespace p2pbench {

inline constexpr auto kDeadlineTick = std::chrono::milliseconds(100);
inline constexpr double kPauseGapS = 1.0;

class RunningTime {
 public:
  // Seconds since the last call (or since construction), or nullopt where the process was stopped
  // in between.
  std::optional<double> since_last() {
    const auto now = std::chrono::steady_clock::now();
    const double gap = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    if (gap > kPauseGapS) return std::nullopt;
    return gap;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace p2pbench
