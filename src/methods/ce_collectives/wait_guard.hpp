// A deadline for the copy-engine collectives' stream waits. cuStreamWaitValue32 cannot give up by
// itself, and what releases put_signal_ce's credit waits and ce_then_flag's waits (a kernel with a
// timeout) needs an SM, which these methods must not take (and, with every SM held, cannot get).
// So a host thread watches the operations' progress, which their streams write into mapped host
// memory (an operation's epoch when it begins, when each peer's signal has arrived, when it
// ends), and where an operation has begun, not ended and shown no progress for the timeout, it
// releases that operation's waits: it writes every awaited word of this rank from a stream of its
// own (a stream memory write, no SM), so the stream drains and the case loop's stalled() names
// the peers whose signals never came. The timeout counts the guard's own polls, so a stopped
// process (a paused job) does not use it up.
//
// The release queues behind nothing of the collective's streams, but a stream shares a hardware
// queue with others beyond CUDA_DEVICE_MAX_CONNECTIONS: there the release may itself wait behind
// the stuck wait, and the case loop's host deadline is what ends the sample (fatally).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_raii.hpp"
#include "kernels/collective_data.hpp"

namespace p2pbench::ce_collectives {

// What the streams write (mapped host memory; the epoch of the operation each word last saw).
struct Progress {
  uint32_t begun = 0;
  uint32_t ended = 0;
  uint32_t arrived[kernels::kMaxCollectiveRanks] = {};  // by peer index: its signal was seen
};

// The signal words, at the start of each rank's signal area: [slot][sender] u32, where an
// operation of epoch e uses slot e % kSlots. Consecutive operations use different slots, so a
// peer's signal for the next operation never meets this one's word before its wait has reset it.
constexpr uint32_t kSlots = 2;
constexpr size_t kSignalWordsBytes = size_t(kSlots) * kernels::kMaxCollectiveRanks * sizeof(uint32_t);
inline uint32_t* signal_word(void* area, uint32_t epoch, int sender) {
  return static_cast<uint32_t*>(area) + (epoch % kSlots) * kernels::kMaxCollectiveRanks + sender;
}

class WaitGuard {
 public:
  // `rank_names`: the case's ranks by index (for the message); `me` this rank's index.
  WaitGuard(int device, std::vector<int> rank_names, int me, double timeout_s);
  WaitGuard(const WaitGuard&) = delete;
  WaitGuard& operator=(const WaitGuard&) = delete;
  ~WaitGuard();  // stops and joins the thread

  // The signal area whose words this rank's waits wait on (set before the first launch).
  void watch(void* own_area);
  Progress* device_progress() const { return static_cast<Progress*>(progress_.device()); }
  // Why the guard released a stalled operation since the last call (then clears it), or nullopt.
  std::optional<std::string> stalled();

 private:
  void run();
  Progress snapshot() const;
  std::string release(const Progress& stuck, void* own_area);

  int device_;
  std::vector<int> ranks_;
  int me_;
  double timeout_s_;
  void* own_area_ = nullptr;
  MappedHostBuffer progress_;
  Stream release_stream_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<std::string> stall_;
  std::thread thread_;  // last: started once everything it reads exists
};

}  // namespace p2pbench::ce_collectives
