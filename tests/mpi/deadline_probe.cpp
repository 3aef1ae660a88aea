// A lock-step loop with a fault on demand, for test_deadlines.py (no GPU): proves that every
// rank ends within its deadline, names the rank and the step, and raises no false alarm for a
// slow-but-alive rank or a job paused as a whole.
//
//   deadline_probe MODE RANK STEP [SECONDS]      (under mpirun -np 2 or more)
//   MODE: normal | stop | stop_after_send | exit | throw | slow | busy | watchdog | signal
//   stop: RANK raises SIGSTOP at STEP; exit: _exit(3); throw: an exception outside the step;
//   stop_after_send: at STEP every rank exchanges a message (rank 0's of 8 MiB, which only a
//   receiver that runs can take), and RANK raises SIGSTOP once its own message is posted;
//   slow: RANK sleeps SECONDS in its local part of STEP (inside its budget);
//   busy: RANK sleeps SECONDS outside any step (alive, not stopped: only the deadline catches it);
//   watchdog: RANK blocks SECONDS inside a region its watchdog guards for 0.5 s;
//   signal: RANK raises SIGTERM at STEP (every rank must stop at the next step, exit 143).
// Env: PROBE_SCALE (timeout scale, default 1), PROBE_STEPS (default 40), PROBE_STEP_MS (default 20),
// PROBE_OUTPUT (a path: rank 0 writes a results file there through ResultsFile, one row per
// completed step; on a stop signal it is finished incomplete, "stopped by SIGTERM after K of N
// steps", so tests/slurm can check what a scheduler's signals leave on disk).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "comm/communicator.hpp"
#include "common/stop_signal.hpp"
#include "common/watchdog.hpp"
#include "measure/lock_step.hpp"
#include "results/results_file.hpp"

namespace {

using namespace p2pbench;

double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : fallback;
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: deadline_probe MODE RANK STEP [SECONDS]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int fault_rank = std::atoi(argv[2]);
  const int fault_step = std::atoi(argv[3]);
  const double seconds = argc > 4 ? std::atof(argv[4]) : 0.0;
  install_stop_signal_handlers();
  CommTimeouts timeouts;
  timeouts.stale_s = 2.0;
  timeouts.scale = env_number("PROBE_SCALE", 1.0);
  Communicator comm(&argc, &argv, timeouts);
  const int me = comm.rank();
  Watchdog watchdog([me](const std::string& message) { std::printf("rank %d: WATCHDOG: %s\n", me, message.c_str()); });
  const LockStep steps(comm, &watchdog);
  const int total = int(env_number("PROBE_STEPS", 40));
  const double step_ms = env_number("PROBE_STEP_MS", 20);
  std::printf("rank %d: pid %d\n", me, int(getpid()));
  std::fflush(stdout);
  std::unique_ptr<ResultsFile> results;
  const char* output = std::getenv("PROBE_OUTPUT");
  const nlohmann::json meta = {{"tool", "deadline_probe"}, {"mode", mode}, {"ranks", comm.size()},
                               {"steps", total}, {"step_ms", step_ms}};
  if (me == 0 && output && *output) {
    results = std::make_unique<ResultsFile>(output, size_t(total), true);
    results->set_meta(meta);
  }
  try {
    for (int k = 0; k < total; ++k) {
      const bool due = me == fault_rank && k == fault_step;
      if (due && mode == "stop") raise(SIGSTOP);
      if (due && mode == "exit") _exit(3);
      if (due && mode == "throw") throw std::runtime_error("an error outside the lock-step at step " + std::to_string(k));
      if (due && mode == "busy") sleep_s(seconds);
      if (due && mode == "signal") raise(SIGTERM);
      const std::string what = "step " + std::to_string(k);
      if (mode == "stop_after_send" && k == fault_step) {
        if (me == fault_rank) comm.set_after_sends_posted([](const char*) { raise(SIGSTOP); });
        comm.exchange(me == 0 ? std::string(8u << 20, 'x') : std::string("small"), what.c_str(), 30.0);
      }
      steps.run_reports(what.c_str(), [&](StepReport&) {
        sleep_s(step_ms * 1e-3);
        if (due && mode == "slow") sleep_s(seconds);
        if (due && mode == "watchdog") {
          Watchdog::Scope guard(&watchdog, 0.5, "a region guarded for 0.5 s");
          sleep_s(seconds);
        }
      }, 2.0);
      if (results) results->add_row({{"step", k}, {"ranks", comm.size()}});
      if (me == 0 && k % 10 == 0) {
        std::printf("rank 0: step %d done\n", k);
        std::fflush(stdout);
      }
    }
  } catch (const PeerLost& e) {
    std::printf("rank %d: PEER LOST: %s\n", me, e.what());
    comm.abort(4);
  } catch (const StopRequested& e) {
    std::printf("rank %d: STOPPED: %s\n", me, e.what());
    if (results)
      results->finish(meta, nullptr, nullptr,
                      "stopped by " + signal_name(e.signal_number()) + " after " + std::to_string(results->cases_done()) +
                          " of " + std::to_string(total) + " steps (received by rank " + std::to_string(e.rank()) + ")");
    comm.finalize();
    return 128 + e.signal_number();
  } catch (const std::exception& e) {
    std::printf("rank %d: ERROR: %s\n", me, e.what());
    comm.abort(5);
  }
  if (results) results->finish(meta, nullptr, nullptr, "");
  std::printf("rank %d: all %d steps done\n", me, total);
  return 0;
}
