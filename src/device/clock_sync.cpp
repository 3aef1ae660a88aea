#include "device/clock_sync.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "kernels/gate_kernels.hpp"

namespace p2pbench {

uint64_t host_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

nlohmann::json ClockOffset::to_json() const {
  return {{"gpu_minus_host_ns", offset_ns}, {"spread_ns", spread_ns}, {"rounds", rounds}};
}

ClockOffset calibrate_gpu_clock(int rounds) {
  Stream stream = make_stream("clock calibration");
  MappedHostBuffer words(2 * sizeof(uint64_t), "clock calibration");
  auto* host_word = static_cast<volatile uint64_t*>(words.host());
  auto* gpu_word = static_cast<volatile uint64_t*>(words.host()) + 1;
  std::vector<double> estimates;
  for (int r = 0; r < rounds; ++r) {
    host_word[0] = 0;
    gpu_word[0] = 0;
    kernels::enqueue_clock_probe(static_cast<const uint64_t*>(words.device()), static_cast<uint64_t*>(words.device()) + 1,
                                 1'000'000'000ull, stream.get());
    // Let the kernel start polling before the host stamps and releases it.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const uint64_t host_now = host_clock_ns();
    __atomic_store_n(const_cast<uint64_t*>(host_word), host_now, __ATOMIC_RELEASE);
    wait_for_stream(stream.get(), kLocalWorkWaitS, "the clock calibration kernel");
    estimates.push_back(double(gpu_word[0]) - double(host_now));
  }
  ClockOffset c;
  c.rounds = rounds;
  c.offset_ns = *std::min_element(estimates.begin(), estimates.end());
  std::sort(estimates.begin(), estimates.end());
  // Spread of the better half: the worst rounds include scheduling noise of the host thread.
  c.spread_ns = estimates[estimates.size() / 2] - estimates.front();
  return c;
}

}  // namespace p2pbench
