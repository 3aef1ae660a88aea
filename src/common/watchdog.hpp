// The last line against a hang: a thread that ends the process when the main thread has not
// left a guarded region in time. It guards calls that cannot be given a deadline of their own
// (NCCL's communicator set-up and teardown, a CUDA call blocked in the driver behind a hung
// kernel, MPI_Finalize). On expiry it runs the owner's action (say what hung, write what
// finished), then ends the process with exit status 1: mpirun then ends the other ranks.
// Time this process spent stopped (SIGSTOP, a suspended job) is not counted.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace p2pbench {

class Watchdog {
 public:
  // `on_expiry` runs on the watchdog's thread with a message naming the region; it must not
  // wait for the main thread (which is stuck), only for short, bounded work.
  using Expiry = std::function<void(const std::string& message)>;
  explicit Watchdog(Expiry on_expiry);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Guards the enclosing region for `seconds` of running time; restores the guard it replaced
  // (regions nest) when it ends.
  class Scope {
   public:
    Scope(Watchdog* dog, double seconds, std::string what);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Watchdog* dog_;
    double previous_left_s_ = 0;
    std::string previous_what_;
  };

 private:
  void loop();

  Expiry on_expiry_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  double left_s_ = 0;  // running seconds left in the current region; <= 0: not armed
  std::string what_;
  std::thread thread_;
};

}  // namespace p2pbench
