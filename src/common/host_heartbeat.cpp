#include "common/host_heartbeat.hpp"

#include <chrono>

namespace p2pbench {

HostHeartbeat::HostHeartbeat() : word_(sizeof(uint64_t), "the host heartbeat word") {
  __atomic_store_n(static_cast<uint64_t*>(word_.host()), uint64_t(1), __ATOMIC_RELEASE);
  thread_ = std::thread([this] { beat(); });
}

HostHeartbeat::~HostHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void HostHeartbeat::beat() {
  auto* word = static_cast<uint64_t*>(word_.host());
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(kPeriodMs), [this] { return stopping_; }))
    __atomic_fetch_add(word, uint64_t(1), __ATOMIC_RELEASE);
}

}  // namespace p2pbench
