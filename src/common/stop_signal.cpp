#include "common/stop_signal.hpp"

#include <signal.h>

#include <atomic>
#include <cstring>

namespace p2pbench {

namespace {

// The one piece of process-wide mutable state: a signal handler can reach nothing else. A
// lock-free atomic is async-signal-safe.
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag must be async-signal-safe");

void on_stop_signal(int signal_number) {
  int expected = 0;
  g_stop_signal.compare_exchange_strong(expected, signal_number);
  // A second Ctrl-C takes SIGINT's default action (ends the process). SIGTERM and SIGUSR1 come
  // from schedulers, which repeat them (at the time limit Slurm 22.05 sends each task of a step
  // SIGTERM, SIGCONT, SIGTERM within milliseconds) and escalate with SIGKILL themselves: a repeat
  // changes nothing, or the repeat would end the rank before it wrote its results.
  if (signal_number != SIGINT) return;
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signal_number, &dfl, nullptr);
}

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // system calls resume; the run checks the flag at its next step
  for (int s : {SIGINT, SIGTERM, SIGUSR1}) sigaction(s, &sa, nullptr);
}

int stop_signal_received() { return g_stop_signal.load(); }

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGKILL: return "SIGKILL";
    case SIGSTOP: return "SIGSTOP";
    default: return "signal " + std::to_string(signal_number);
  }
}

}  // namespace p2pbench
