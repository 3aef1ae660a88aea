#include "case_reader.hpp"

#include <string>

#include "vocab/flows.hpp"
#include "vocab/methods.hpp"

namespace p2pbench::testing {

namespace {

using json = nlohmann::json;

const json& field(const json& j, const char* key) {
  static const json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string text_of(const json& j, const char* key, const std::string& fallback = "") {
  const json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

template <typename T>
std::optional<T> optional_of(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_null() ? std::nullopt : std::optional<T>(v.get<T>());
}

// The samples of `figures` (a raw-samples list), else the statistics `stats` stands for.
std::vector<double> samples_of(const json& figures, const json& stats) {
  if (figures.is_array() && !figures.empty()) return figures.get<std::vector<double>>();
  if (!stats.is_object() || !stats.contains("median")) return {};
  const double median = stats["median"].get<double>();
  return {stats.value("min", median), median, stats.value("max", median)};
}

FlowSamples flow_of(const json& f) {
  FlowSamples s;
  s.flow = {f.at("src_rank").get<int>(), f.at("dst_rank").get<int>()};
  s.gbps = samples_of(field(f, "samples_gbps"), field(f, "bandwidth_gbps"));
  s.time_us = samples_of(json(), field(f, "time_us"));
  if (field(f, "bytes").is_number_unsigned()) s.bytes = field(f, "bytes").get<uint64_t>();
  return s;
}

// v2 rows name their flows; v1 rows a uni pair's ranks or a bidir pair's `directions`.
std::vector<FlowSamples> flows_of(const json& row, Mode mode) {
  std::vector<FlowSamples> out;
  const json& flows = field(row, "flows");
  const json& directions = field(row, "directions");
  if (flows.is_array() && !flows.empty()) {
    for (const json& f : flows) out.push_back(flow_of(f));
  } else if (directions.is_array()) {
    for (const json& d : directions) out.push_back(flow_of(d));
  } else if (field(row, "src_rank").is_number()) {
    out.push_back(flow_of(row));
  } else if (mode == Mode::kBidir) {
    out = {FlowSamples::named({0, 1}, 0), FlowSamples::named({1, 0}, 0)};
  }
  return out;
}

CaseSpec spec_of(const json& row, Method method) {
  CaseSpec c;
  c.method = method;
  c.direction = parse_direction(text_of(row, "direction", "push")).value_or(Direction::kPush);
  c.mode = parse_mode(text_of(row, "mode", "uni")).value_or(Mode::kUni);
  c.bytes = field(row, "bytes").is_number_unsigned() ? row["bytes"].get<uint64_t>() : 0;
  c.pattern = parse_pattern(text_of(row, "pattern", "matrix")).value_or(Pattern::kMatrix);
  c.schedule = parse_schedule(text_of(row, "schedule"));
  c.round = optional_of<int>(row, "round");
  c.blocks = optional_of<int>(row, "blocks");
  c.threads = optional_of<int>(row, "threads");
  c.unroll = optional_of<int>(row, "unroll");
  c.smem_bytes = optional_of<uint64_t>(row, "smem_bytes");
  c.stages = optional_of<int>(row, "stages");
  c.protocol = optional_of<std::string>(row, "protocol");
  c.atomic_type = optional_of<std::string>(row, "atomic_type");
  c.atomic_pattern = optional_of<std::string>(row, "atomic_pattern");
  c.ops_per_thread = optional_of<uint64_t>(row, "ops_per_thread");
  c.hot_addresses = optional_of<uint64_t>(row, "hot_addresses");
  c.workload = optional_of<std::string>(row, "workload");
  c.sm_partition = optional_of<int>(row, "sm_partition");
  c.both_gpus_busy = optional_of<bool>(row, "both_gpus_busy");
  if (const auto priority = optional_of<std::string>(row, "transfer_priority")) c.transfer_high_priority = *priority == "highest";
  if (const auto engine = optional_of<std::string>(row, "engine")) c.engine = parse_method(*engine);
  return c;
}

CaseOutcome outcome_of(const json& row, Mode mode) {
  CaseOutcome o;
  const std::string status = text_of(row, "status", "ok");
  o.status = status == "ok" ? CaseStatus::kOk : status == "skipped" ? CaseStatus::kSkipped : CaseStatus::kFailed;
  o.error = text_of(row, "error");
  o.verified = field(row, "verified") == true;
  o.iterations = field(row, "iterations").is_number_unsigned() ? row["iterations"].get<uint64_t>() : 0;
  o.buffer_pool_bytes = field(row, "buffer_pool_bytes").is_number_unsigned() ? row["buffer_pool_bytes"].get<uint64_t>() : 0;
  o.sms_used = optional_of<int>(row, "sms_used");
  o.gbps = samples_of(field(row, "samples_gbps"), field(row, "bandwidth_gbps"));
  o.time_us = samples_of(json(), field(row, "time_us"));
  o.flows = flows_of(row, mode);
  if (field(row, "overlap").is_number()) o.overlap = {row["overlap"].get<double>()};
  o.latency_us = samples_of(field(row, "samples_us"), field(row, "latency_us"));
  o.issue_interval_us = samples_of(field(row, "samples_issue_interval_us"), field(row, "issue_interval_us"));
  o.cycles = samples_of(json(), field(row, "cycles"));
  o.latency_at_peak_clock_us = samples_of(json(), field(row, "latency_at_peak_clock_us"));
  return o;
}

}  // namespace

std::optional<CaseResult> case_from_row(const json& row) {
  const auto method = parse_method(text_of(row, "method"));
  if (!method) return std::nullopt;
  CaseResult r;
  r.spec = spec_of(row, *method);
  r.outcome = outcome_of(row, r.spec.mode);
  r.spec.flows.clear();
  for (const FlowSamples& f : r.outcome.flows) r.spec.flows.push_back(f.flow);
  return r;
}

std::vector<CaseResult> cases_from_rows(const std::vector<json>& rows) {
  std::vector<CaseResult> cases;
  for (const json& row : rows)
    if (auto r = case_from_row(row)) cases.push_back(std::move(*r));
  return cases;
}

std::set<std::pair<int, int>> same_device_flows(const std::vector<json>& rows) {
  std::set<std::pair<int, int>> pairs;
  for (const json& row : rows)
    for (const json& f : field(row, "flows").is_array() ? row["flows"] : json::array())
      if (field(f, "same_device") == true) pairs.insert({f.at("src_rank").get<int>(), f.at("dst_rank").get<int>()});
  return pairs;
}

}  // namespace p2pbench::testing
