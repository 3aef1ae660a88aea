#include "results/case_result.hpp"

#include <algorithm>

#include "stats/statistics.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

std::optional<double> median_gbps(const CaseResult& r) {
  const MethodKind kind = method_info(r.spec.method).kind;
  if (kind == MethodKind::kLatency || kind == MethodKind::kInterference) return std::nullopt;
  if (r.outcome.status != CaseStatus::kOk || r.outcome.gbps.empty()) return std::nullopt;
  return summarize(r.outcome.gbps).median;  // as the row writes it
}

bool is_single_pair(const CaseSpec& c) {
  if (c.pattern == Pattern::kSampled) return true;
  return c.pattern == Pattern::kMatrix && c.schedule.value_or(Schedule::kSequential) != Schedule::kRounds;
}

bool involves_same_device(const CaseSpec& c, const GroupLayout& layout) {
  return std::any_of(c.flows.begin(), c.flows.end(), [&](const Flow& f) {
    return f.src_rank != f.dst_rank && layout.same_device(f.src_rank, f.dst_rank);
  });
}

}  // namespace p2pbench
