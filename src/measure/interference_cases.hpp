// The interference procedure for the one case loop (case_procedure.hpp), and what its cases
// share (streams, workloads). A sample has three or four gated phases, each released by the
// same start gate:
//   1. the transfer alone (in its SM group where partitioned), verified;
//   2. the workload alone on the whole GPU, and 2b. alone in its SM group (partitioned cases);
//   3. both at once, each on its own stream with its own events and %globaltimer window; the
//      workload keeps launching until the transfer's window has closed; the transfer verified,
//      the workload's result checked.
// The row reports both figures alone and together, the slowdowns and the windows' overlap.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "config/interference_config.hpp"
#include "engines/transfer_engine.hpp"
#include "workloads/workload.hpp"
#include "measure/case_outcome.hpp"
#include "measure/case_procedure.hpp"
#include "measure/interference_phase.hpp"
#include "measure/lock_step.hpp"
#include "measure/case_group.hpp"
#include "measure/runner_options.hpp"
#include "device/shared_gate.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class InterferenceCases {
 public:
  // `make_engine` builds each case's transfer engine (null: it cannot run here).
  // `group` gives each flow's buffers (the case loop's, so the plan's destination slots hold).
  InterferenceCases(const Communicator& comm, const RunnerOptions& options, const InterferenceSettings& settings, int device,
                    SharedGate& gate, CaseGroup& group, EngineFactory make_engine);
  ~InterferenceCases();

  // The case's procedure, for run_procedure.
  std::unique_ptr<CaseProcedure> procedure_for(const CaseSpec& c, uint64_t case_index);

 private:
  struct Case;  // one case's roles, engine, streams and sizes (interference_cases.cpp)
  friend class InterferenceCase;

  // Steps of a case; each returns false when the case ended (out says why).
  bool agree_on_skips(Case& k, CaseOutcome& out);
  bool calibrate(Case& k, CaseOutcome& out);
  bool place_ends(Case& k, CaseOutcome& out);
  bool warm_up(Case& k, CaseOutcome& out);
  // One transfer's time (its end's part on this rank), within calibration's step.
  void time_transfer(Case& k, StepReport& r, double& single_ms, double deadline_s);
  // This rank's buffers and signal areas for its end of `flow` of case `c`.
  Endpoints endpoints_for(const CaseSpec& c, const Flow& flow);
  bool describe_workload(Case& k, CaseOutcome& out);
  bool run_sample(Case& k, int sample, uint64_t seed, CaseOutcome& out);

  // A sample's phases, each every rank's figures or nothing where the case ended (out says why).
  using Phase = std::optional<std::vector<PhaseFigures>>;
  struct SampleFigures {
    Phase transfer_alone, workload_alone, workload_in_group, together;  // workload_in_group: partitioned only
  };
  Phase transfer_alone(Case& k, GatedWindows& transfer, CaseOutcome& out);
  Phase workload_alone(Case& k, GatedWindow& w, bool whole_gpu, uint64_t launches, const char* what, CaseOutcome& out);
  Phase together(Case& k, GatedWindows& transfer, GatedWindow& grouped, CaseOutcome& out);
  // The sample's figures into the row, and the cover the next sample plans.
  void record_sample(Case& k, const SampleFigures& f, CaseOutcome& out) const;
  double gate_timeout_s() const;
  // One gated phase: `queue` enqueues this rank's work behind the gate's next ticket (its
  // argument), the gate
  // opens, then `finish` waits for it and reports; returns every rank's report, or nothing.
  Phase gated_phase(const char* what, const std::function<void(uint32_t)>& queue,
                                                       const std::function<void(PhaseFigures&)>& finish, CaseOutcome& out);
  // Before a phase: the transfer's source filled and destination poisoned (`transfer`), the
  // workload's result poisoned (`workload`). After it, the same ones checked.
  bool fill_and_poison(Case& k, uint64_t seed, bool transfer, bool workload, CaseOutcome& out);
  bool verify(Case& k, int sample, uint64_t seed, bool transfer, bool workload, CaseOutcome& out);
  Workload& workload(const std::string& name);

  const Communicator& comm_;
  LockStep steps_;
  RunnerOptions options_;
  InterferenceSettings settings_;
  int device_;
  SharedGate& gate_;
  CaseGroup& group_;
  EngineFactory make_engine_;
  // Primary context: unpartitioned cases (the second transfer stream: a rank's second end).
  Stream transfer_stream_, second_transfer_stream_, workload_stream_, aux_stream_;
  std::map<std::string, std::unique_ptr<Workload>> workloads_;  // made on first use, kept for the sweep
};

}  // namespace p2pbench
