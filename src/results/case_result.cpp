#include "results/case_result.hpp"

#include <algorithm>
#include <set>

#include "stats/statistics.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

CollectiveFigures collective_figures(const CaseSpec& c, const CaseOutcome& o) {
  CollectiveFigures f;
  std::set<int> members;
  for (const Flow& flow : c.flows) members.insert({flow.src_rank, flow.dst_rank});
  f.ranks = int(members.size());
  f.op = method_info(c.method).collective;
  f.element = method_info(c.method).collective_element;
  f.size = collective_size(f.op, c.bytes, f.ranks, f.element);
  if (!f.size || o.status != CaseStatus::kOk) return f;
  for (double us : o.time_us) {
    f.algbw_gbps.push_back(algorithm_gbps(f.size->bytes, us * 1e-6));
    f.busbw_gbps.push_back(bus_gbps(f.op, f.ranks, f.size->bytes, us * 1e-6));
  }
  return f;
}

const std::vector<double>* figure_samples(const CaseResult& r) {
  const std::vector<double>& samples = is_latency(r.spec.method) ? r.outcome.latency_us : r.outcome.gbps;
  return r.outcome.status == CaseStatus::kOk && !samples.empty() ? &samples : nullptr;
}

std::vector<OwnFigure> own_figures(const CaseResult& r) {
  std::vector<OwnFigure> figures;
  if (r.outcome.status != CaseStatus::kOk) return figures;
  for (const RowField& f : method_info(r.spec.method).row_fields) {
    if (f.type != RowFieldType::kStats || f.unit.empty() || f.unit == "GB/s" || !f.value) continue;
    const nlohmann::json value = f.value(r.spec, r.outcome);
    if (value.is_object() && value.contains("median") && value["median"].is_number())
      figures.push_back({f.name, f.unit, value["median"].get<double>()});
  }
  return figures;
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
