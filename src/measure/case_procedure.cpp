#include "measure/case_procedure.hpp"

namespace p2pbench {

CaseOutcome run_procedure(CaseProcedure& procedure, int samples, bool verify) {
  CaseOutcome out;
  if (!procedure.agree_on_skips(out) || !procedure.prepare(out)) return out;
  bool complete = true;
  for (int s = -procedure.warmup_samples(); s < samples && complete; ++s) complete = procedure.sample(s, out);
  complete = complete && procedure.finish(out);
  out.verified = complete && out.status == CaseStatus::kOk && (verify || procedure.always_checks());
  return out;
}

}  // namespace p2pbench
