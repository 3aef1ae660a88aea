#include "results/case_result.hpp"

#include <algorithm>

#include "stats/statistics.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

const std::vector<double>* figure_samples(const CaseResult& r) {
  const std::vector<double>& samples = is_latency(r.spec.method) ? r.outcome.latency_us : r.outcome.gbps;
  return r.outcome.status == CaseStatus::kOk && !samples.empty() ? &samples : nullptr;
}

std::optional<double> median_gbps(const CaseResult& r) {
  const MethodKind kind = method_info(r.spec.method).kind;
  if (kind == MethodKind::kLatency || kind == MethodKind::kInterference) return std::nullopt;
  const std::vector<double>* samples = figure_samples(r);
  if (!samples) return std::nullopt;
  return summarize(*samples).median;  // as the row writes it
}

bool is_single_pair(const CaseSpec& c) {
  if (c.pattern == Pattern::kSampled) return true;
  return c.pattern == Pattern::kMatrix && c.schedule.value_or(Schedule::kSequential) != Schedule::kRounds;
}

bool is_same_device_flow(const Flow& f, const GroupLayout& layout) {
  return f.src_rank != f.dst_rank && layout.same_device(f.src_rank, f.dst_rank);
}

bool involves_same_device(const CaseSpec& c, const GroupLayout& layout) {
  return std::any_of(c.flows.begin(), c.flows.end(), [&](const Flow& f) { return is_same_device_flow(f, layout); });
}

}  // namespace p2pbench
