// SIGINT, SIGTERM and SIGUSR1 ask the run to stop: the handler only records the signal; the
// ranks agree on it at their next lock-step, stop there, write what finished and exit with
// 128 + the signal. A second SIGINT ends the process at once (its default action is restored
// after the first), so an impatient Ctrl-C still works; repeated SIGTERM and SIGUSR1 are only
// recorded once (Slurm sends a step's tasks SIGTERM twice at the time limit, then SIGKILL).
#pragma once

#include <string>

namespace p2pbench {

// Installs the handlers (once per process; idempotent).
void install_stop_signal_handlers();

// The first stop signal received, or 0.
int stop_signal_received();

// "SIGTERM" for 15, etc.
std::string signal_name(int signal_number);

}  // namespace p2pbench
