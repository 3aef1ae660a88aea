#include "methods/ce_collectives/wait_guard.hpp"

#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

#include <cuda.h>  // the stream write flags

#include "common/cuda_check.hpp"
#include "kernels/stream_value_ops.hpp"

namespace p2pbench::ce_collectives {
namespace {

// Often enough that a stall is released within a poll of its deadline, rarely enough to cost
// nothing beside the host's other work.
constexpr auto kPoll = std::chrono::milliseconds(10);

bool same(const Progress& a, const Progress& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

WaitGuard::WaitGuard(int device, std::vector<int> rank_names, int me, double timeout_s)
    : device_(device),
      ranks_(std::move(rank_names)),
      me_(me),
      timeout_s_(timeout_s),
      progress_(sizeof(Progress), "the copy-engine collective's progress words"),
      release_stream_(make_stream("releasing a stalled copy-engine collective")) {
  *static_cast<Progress*>(progress_.host()) = Progress{};
  thread_ = std::thread([this] { run(); });
}

WaitGuard::~WaitGuard() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void WaitGuard::watch(void* own_area) {
  std::lock_guard<std::mutex> lock(mutex_);
  own_area_ = own_area;
}

std::optional<std::string> WaitGuard::stalled() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(stall_, std::nullopt);
}

// The GPU writes these words while the host reads them: volatile, word by word.
Progress WaitGuard::snapshot() const {
  const volatile uint32_t* words = static_cast<const volatile uint32_t*>(progress_.host());
  Progress p;
  uint32_t* out = reinterpret_cast<uint32_t*>(&p);
  for (size_t k = 0; k < sizeof p / sizeof(uint32_t); ++k) out[k] = words[k];
  return p;
}

// An operation that has begun and not ended, unchanged for the timeout, is stuck.
void WaitGuard::run() {
  const long long polls_to_give_up = (long long)(timeout_s_ * 1000.0 / double(kPoll.count())) + 1;
  Progress last = snapshot();
  long long still = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kPoll, [this] { return stop_; })) {
    const Progress now = snapshot();
    if (now.begun == now.ended || !same(now, last) || !own_area_) {
      last = now;
      still = 0;
      continue;
    }
    if (++still < polls_to_give_up) continue;
    still = 0;
    std::string why = release(now, own_area_);
    if (!stall_) stall_ = std::move(why);  // the first stall of the sample is the one to name
  }
}

// Every awaited word of the stuck operation set, as its peers would have; says who never came.
std::string WaitGuard::release(const Progress& stuck, void* own_area) {
  std::string missing;
  for (int p = 0; p < int(ranks_.size()); ++p)
    if (p != me_ && stuck.arrived[p] != stuck.begun) missing += (missing.empty() ? "" : ", ") + std::to_string(ranks_[size_t(p)]);
  std::string why = "rank " + std::to_string(ranks_[size_t(me_)]) + " waited more than " +
                    std::to_string(int(timeout_s_)) + " s for the copy-engine signal of rank" +
                    (missing.find(',') == std::string::npos ? " " : "s ") + (missing.empty() ? "?" : missing) +
                    " (operation " + std::to_string(stuck.begun) + " since the signal words' reset); its waits were released";
  try {
    cuda_check(cudaSetDevice(device_), "selecting the GPU of a stalled copy-engine collective");
    for (int p = 0; p < int(ranks_.size()); ++p)
      if (p != me_)
        kernels::stream_write_value(release_stream_.get(), signal_word(own_area, stuck.begun, p), 1,
                                    CU_STREAM_WRITE_VALUE_DEFAULT, "releasing a stalled copy-engine collective's wait");
  } catch (const std::exception& e) {
    why += std::string(", but the release failed: ") + e.what();
  }
  return why;
}

}  // namespace p2pbench::ce_collectives
