#include "measure/lock_step.hpp"

#include "common/cuda_check.hpp"
#include "common/stop_signal.hpp"

namespace p2pbench {

StopRequested::StopRequested(int signal_number, int rank)
    : std::runtime_error("interrupted by " + signal_name(signal_number) + " (received by rank " + std::to_string(rank) + ")"),
      signal_(signal_number),
      rank_(rank) {}

void LockStep::run_guarded(const char* what, const std::function<void()>& local, double local_work_s,
                           StepReport& report) const {
  const std::string rank = "rank " + std::to_string(comm_.rank()) + ": ";
  // The local part's own waits have deadlines; the watchdog catches a call that blocks
  // without one (a CUDA call stuck behind a hung kernel).
  Watchdog::Scope guard(watchdog_, (local_work_s + 2 * kSlackS) * comm_.timeouts().scale, rank + std::string(what));
  if (faults_) faults_->before_step(what);
  run_captured(rank, local, report);
}

void LockStep::throw_if_stopped(const std::vector<int>& signals) {
  for (size_t r = 0; r < signals.size(); ++r)
    if (signals[r]) throw StopRequested(signals[r], int(r));
}

std::vector<StepReport> LockStep::run_reports(const char* what, const std::function<void(StepReport&)>& local,
                                              double local_work_s) const {
  StepReport mine;
  run_guarded(what, [&] { local(mine); }, local_work_s, mine);
  mine.stop_signal = stop_signal_received();
  std::vector<StepReport> all;
  std::vector<int> signals;
  for (const auto& blob : comm_.exchange(mine.to_bytes(), what, local_work_s + kSlackS)) {
    all.push_back(StepReport::from_bytes(blob));
    signals.push_back(all.back().stop_signal);
  }
  throw_if_stopped(signals);
  return all;
}

}  // namespace p2pbench
