#include "common/event_wait.hpp"

#include <chrono>
#include <thread>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace p2pbench {

void wait_for_event(cudaEvent_t event, double deadline_s, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  while (true) {
    const cudaError_t err = cudaEventQuery(event);
    if (err == cudaSuccess) return;
    if (err != cudaErrorNotReady) cuda_check(err, "waiting for " + what);
    if (seconds_since(t0) > deadline_s)
      throw RuntimeFailure("timed out after " + std::to_string(deadline_s) + " s waiting for " + what);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace p2pbench
