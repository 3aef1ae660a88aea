// One collective step of a case: every rank runs its local part (errors caught), then every
// rank learns every rank's result, so the ranks stay in lock-step even when one of them fails.
// Every step has a deadline (the communicator's exchange), a watchdog over the local part,
// and carries each rank's stop request (SIGINT/SIGTERM/SIGUSR1), so all ranks stop together.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "common/fault_injection.hpp"
#include "common/typed_exchange.hpp"
#include "common/watchdog.hpp"
#include "measure/case_outcome.hpp"
#include "measure/step_report.hpp"

namespace p2pbench {

// One rank's part of a step that carries data of its own.
template <typename Payload>
struct RankStep {
  StepReport report;
  Payload data;
};

// Reports of a step, without their data (for any_failed and its kin).
template <typename Payload>
std::vector<StepReport> reports_of(const std::vector<RankStep<Payload>>& steps) {
  std::vector<StepReport> reports;
  for (const auto& s : steps) reports.push_back(s.report);
  return reports;
}

// A rank received a stop signal: every rank throws this from the same step.
class StopRequested : public std::runtime_error {
 public:
  StopRequested(int signal_number, int rank);
  int signal_number() const { return signal_; }
  int rank() const { return rank_; }

 private:
  int signal_;
  int rank_;
};

class LockStep {
 public:
  // How long, by default, one rank's local part of a step may take before the others stop
  // waiting for it (seconds before --timeout-scale). Steps that wait for the GPU longer pass
  // their own bound.
  static constexpr double kDefaultLocalWorkS = 20.0;
  // Added to every step's bound: scheduling, a slow verification, a page fault storm.
  static constexpr double kSlackS = 10.0;

  explicit LockStep(const Communicator& comm, Watchdog* watchdog = nullptr, StepFaults* faults = nullptr)
      : comm_(comm), watchdog_(watchdog), faults_(faults) {}

  // Every rank's report, indexed by rank. The local part's exception becomes its report's
  // error: a CUDA error that leaves the context unusable, and any RuntimeFailure (timeouts), is
  // fatal. `local_work_s` bounds the local part on every rank (unscaled): the others wait that
  // long plus kSlackS. Throws PeerLost (a rank did not arrive) or StopRequested (a rank was
  // asked to stop).
  std::vector<StepReport> run_reports(const char* what, const std::function<void(StepReport&)>& local,
                                      double local_work_s = kDefaultLocalWorkS) const;

  // The same with a step's own data: a struct of named fields that nlohmann's to_json/from_json
  // know (NLOHMANN_DEFINE_TYPE_*_WITH_DEFAULT beside it). A rank whose local part failed, or
  // left it untouched, reports the default-constructed value.
  template <typename Payload>
  std::vector<RankStep<Payload>> run(const char* what, const std::function<void(StepReport&, Payload&)>& local,
                                     double local_work_s = kDefaultLocalWorkS) const {
    std::vector<RankStep<Payload>> all;
    for (StepReport& report : run_reports(what, [&](StepReport& r) {
           Payload mine{};
           local(r, mine);
           r.payload = encode_value(mine);
         }, local_work_s)) {
      Payload data{};
      if (!report.payload.empty()) data = decode_value<Payload>(report.payload);
      all.push_back({std::move(report), std::move(data)});
    }
    return all;
  }

 private:
  // Runs `local` under the watchdog, its exception captured into `report`.
  void run_guarded(const char* what, const std::function<void()>& local, double local_work_s, StepReport& report) const;
  // Throws StopRequested naming the first rank that received a stop signal (0: none).
  static void throw_if_stopped(const std::vector<int>& signals);

  const Communicator& comm_;
  Watchdog* watchdog_;
  StepFaults* faults_;  // the tests' step=S faults (null: none)
};

}  // namespace p2pbench
