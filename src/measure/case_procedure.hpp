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
  // The family checks what it moved even when verification is off (a latency probe's payload
  // or chain end is its result: there is nothing cheaper to skip).
  virtual bool always_checks() const { return false; }
};

// Runs the case: skips, preparation, `samples` kept samples after the warm-up ones, the finish.
// verified: every sample ran and was checked, and the case ended well.
CaseOutcome run_procedure(CaseProcedure& procedure, int samples, bool verify);

}  // namespace p2pbench
