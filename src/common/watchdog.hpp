// The last line against a hang: a thread that ends the process when the main thread has not
// left a guarded region in time. It guards calls that cannot be given a deadline of their own (a
// CUDA call blocked in the driver behind a hung kernel, MPI_Finalize) and the steps around those
// that have one (NCCL's set-up and teardown). On expiry it runs the owner's action (say what hung,
// write what finished), then ends the process with exit status 1: mpirun then ends the others.
// Time this process spent stopped (SIGSTOP, a suspended job) is not counted.
// It also bounds a stop: once a stop signal has arrived (common/stop_signal.hpp), the process has
// `stop_grace_s` of running time to end on its own (finish the step, write the file) wherever it
// waits: a rank resumed by the launcher's SIGCONT and SIGTERM inside a long GPU wait, with its
// peer gone, must not hold the job.
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
  // `stop_grace_s` <= 0: stop signals are not watched.
  explicit Watchdog(Expiry on_expiry, double stop_grace_s = 0);
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
  // Counts a tick of `gap_s` against a stop's grace; true when the grace is spent.
  bool stop_grace_spent(double gap_s);

  Expiry on_expiry_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  double left_s_ = 0;  // running seconds left in the current region; <= 0: not armed
  std::string what_;
  double stop_grace_s_ = 0;
  double stop_left_s_ = -1;  // running seconds left after a stop signal; < 0: none seen yet
  std::thread thread_;
};

}  // namespace p2pbench
