#include "common/watchdog.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "common/errors.hpp"
#include "common/running_time.hpp"
#include "common/stop_signal.hpp"

namespace p2pbench {

Watchdog::Watchdog(Expiry on_expiry, double stop_grace_s)
    : on_expiry_(std::move(on_expiry)), stop_grace_s_(stop_grace_s), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  RunningTime ran;
  while (!stop_) {
    wake_.wait_for(lock, kDeadlineTick);
    const std::optional<double> ran_s = ran.since_last();
    if (!ran_s) continue;  // this process was stopped: no time passed for it
    const double gap = *ran_s;
    std::string message;
    int status = kExitFailure;
    if (stop_grace_spent(gap)) {
      status = 128 + stop_signal_received();
      message = signal_name(stop_signal_received()) + " arrived " + std::to_string(int(stop_grace_s_)) +
                " s ago and the run has not ended (" + (what_.empty() ? "between guarded steps" : "in: " + what_) +
                "): ending the process (watchdog)";
    } else {
      if (left_s_ <= 0) continue;  // not armed
      left_s_ -= gap;
      if (left_s_ > 0) continue;
      message = what_ + " did not finish in time: ending the process (watchdog)";
    }
    lock.unlock();
    on_expiry_(message);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(status);
  }
}

bool Watchdog::stop_grace_spent(double gap_s) {
  if (stop_grace_s_ <= 0 || stop_signal_received() == 0) return false;
  if (stop_left_s_ < 0) {
    stop_left_s_ = stop_grace_s_;
    return false;
  }
  stop_left_s_ -= gap_s;
  return stop_left_s_ <= 0;
}

Watchdog::Scope::Scope(Watchdog* dog, double seconds, std::string what) : dog_(dog) {
  if (!dog_) return;
  std::lock_guard<std::mutex> lock(dog_->mutex_);
  previous_left_s_ = dog_->left_s_;
  previous_what_ = std::move(dog_->what_);
  dog_->left_s_ = seconds;
  dog_->what_ = std::move(what);
}

Watchdog::Scope::~Scope() {
  if (!dog_) return;
  std::lock_guard<std::mutex> lock(dog_->mutex_);
  dog_->left_s_ = previous_left_s_;
  dog_->what_ = std::move(previous_what_);
}

}  // namespace p2pbench
