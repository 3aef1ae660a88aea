#include "common/end_deadline.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/running_time.hpp"

namespace p2pbench {

void arm_end_deadline(double seconds, int exit_status, int rank, const std::string& what) {
  char message[512];
  std::snprintf(message, sizeof message, "p2pbench: rank %d: %s did not finish within %.0f s; ending the process\n", rank,
                what.c_str(), seconds);
  const std::string text = message;
  std::thread([seconds, exit_status, text] {
    double left = seconds;
    RunningTime ran;
    while (left > 0) {
      std::this_thread::sleep_for(kDeadlineTick);
      if (const auto gap = ran.since_last()) left -= *gap;
    }
    // write(2) and _exit only: the rest of the process may be half torn down by now.
    [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, text.data(), text.size());
    _exit(exit_status);
  }).detach();
}

}  // namespace p2pbench
