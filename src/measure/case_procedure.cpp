#include "measure/case_procedure.hpp"

#include <algorithm>
#include <cmath>

namespace p2pbench {

namespace {
// A sample's steps besides its transfers (fill and poison, the gate's lock-steps, the check):
// a few milliseconds on one node, an estimate that only sizes the count.
constexpr double kSampleStepsS = 0.004;
}  // namespace

int samples_for_budget(int samples, double budget_s, double sample_s) {
  if (budget_s <= 0 || sample_s <= 0) return samples;
  return int(std::clamp(std::floor(budget_s / (sample_s + kSampleStepsS)), double(samples), double(kMaxBudgetSamples)));
}

CaseOutcome run_procedure(CaseProcedure& procedure, int samples, bool verify, double budget_s) {
  CaseOutcome out;
  if (!procedure.agree_on_skips(out) || !procedure.prepare(out)) return out;
  samples = samples_for_budget(samples, budget_s, procedure.sample_seconds());
  bool complete = true;
  for (int s = -procedure.warmup_samples(); s < samples && complete; ++s) complete = procedure.sample(s, out);
  complete = complete && procedure.finish(out);
  out.verified = complete && out.status == CaseStatus::kOk && (verify || procedure.always_checks());
  return out;
}

}  // namespace p2pbench
