// The one case loop. Every method measures a case through the same five steps, run by every
// rank in lock-step; a family of methods (copies, latency probes, interference) says only how
// each step is done for it:
//   1. agree on skips   (the plan's reasons, memory paths, the engine's or kernel's limits)
//   2. prepare          (engines, chains, calibration, warm-up)
//   3. warm-up samples  (index < 0: run and checked, their figures not kept as samples)
//   4. samples          (index 0 .. samples-1: run behind the start gate, every byte checked,
//                        then recorded; a sample that fails its check is not recorded)
//   5. finish           (after the last sample: a spin to end, per-case figures; a case
//                        that ended earlier releases what it holds as its procedure dies)
// The loop, not the family, decides how many samples run, when the case ends and whether it
// counts as verified.
#pragma once

#include "measure/case_outcome.hpp"

namespace p2pbench {

class CaseProcedure {
 public:
  virtual ~CaseProcedure() = default;

  // Each returns false when the case ended there (`out` says why).
  virtual bool agree_on_skips(CaseOutcome& out) = 0;
  virtual bool prepare(CaseOutcome& out) = 0;
  virtual bool sample(int index, CaseOutcome& out) = 0;
  virtual bool finish(CaseOutcome&) { return true; }

  // Samples run before the first kept one (their index counts up to -1).
  virtual int warmup_samples() const { return 0; }
  // One kept sample's calibrated length in seconds, the same on every rank (0: not known, e.g.
  // latency probes): what a time budget is turned into a sample count with.
  virtual double sample_seconds() const { return 0.0; }
  // The family checks what it moved even when verification is off (a latency probe's payload
  // or chain end is its result: there is nothing cheaper to skip).
  virtual bool always_checks() const { return false; }
};

// Runs the case: skips, preparation, `samples` kept samples after the warm-up ones, the finish.
// verified: every sample ran and was checked, and the case ended well. `budget_s` > 0 (a
// burn-in window's share): as many samples as fill it, at least `samples`, where the family
// knows its sample length; each rank computes the same count from the agreed calibration.
CaseOutcome run_procedure(CaseProcedure& procedure, int samples, bool verify, double budget_s = 0.0);

// Samples that fill `budget_s` when one lasts `sample_s` plus the steps around it (filling,
// the gate, the check), at least `samples`, at most kMaxBudgetSamples.
inline constexpr int kMaxBudgetSamples = 100000;
int samples_for_budget(int samples, double budget_s, double sample_s);

}  // namespace p2pbench
