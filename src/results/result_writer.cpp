#include "results/result_writer.hpp"

#include <algorithm>
#include <ctime>
#include <utility>

#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "results/case_result.hpp"
#include "results/interference_rows.hpp"
#include "results/json_fields.hpp"
#include "results/method_row_fields.hpp"
#include "results/read_chase_rows.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

using json = nlohmann::json;

const char* status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::kOk: return "ok";
    case CaseStatus::kFailed: return "failed";
    case CaseStatus::kSkipped: return "skipped";
  }
  return "failed";
}

json latency_stats(const std::vector<double>& samples) {
  json j = to_json(summarize(samples));
  for (const auto& [key, q] : {std::pair<const char*, double>{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99},
                               {"p99_9", 0.999}})
    j[key] = quantile(samples, q);
  return j;
}

std::optional<double> aggregate_peak(const CaseSpec& c, const GroupFacts& facts) {
  double sum = 0;
  for (const Flow& f : c.flows) {
    const auto p = f.src_rank == f.dst_rank ? std::nullopt : facts.peak(f.src_rank, f.dst_rank);
    if (!p) return std::nullopt;
    sum += *p;
  }
  return sum;
}

std::optional<double> GroupFacts::peak(int src, int dst) const {
  if (src < 0 || dst < 0 || size_t(src) >= peak_gbps.size() || size_t(dst) >= peak_gbps[size_t(src)].size()) return std::nullopt;
  return peak_gbps[size_t(src)][size_t(dst)];
}

std::optional<uint64_t> GroupFacts::l2_of(int rank) const {
  if (rank < 0 || size_t(rank) >= l2_bytes.size()) return std::nullopt;
  return l2_bytes[size_t(rank)];
}

GroupFacts GroupFacts::of(GroupLayout layout) {
  GroupFacts f;
  f.layout = std::move(layout);
  return f;
}

GroupFacts GroupFacts::pair(std::optional<double> peak) {
  GroupFacts f;
  f.layout = GroupLayout::distinct(2);
  f.peak_gbps = {{std::nullopt, peak}, {peak, std::nullopt}};
  return f;
}

std::optional<double> pct_of_peak(double median_gbps, std::optional<double> peak_gbps) {
  if (!peak_gbps || *peak_gbps <= 0) return std::nullopt;
  return 100.0 * median_gbps / *peak_gbps;
}

namespace {

json pct_or_null(const json& stats, std::optional<double> peak) {
  return stats.is_null() ? json() : optional_json(pct_of_peak(stats["median"].get<double>(), peak));
}

// Bytes of one transfer of the flow: its own where the case loop recorded them, else the case's
// (flows named before the case ran, latency loads).
uint64_t transfer_bytes(const CaseSpec& c, const FlowSamples& f) { return f.bytes ? f.bytes : c.bytes; }

// The flow's bytes over its longest transfer of the stamped sample (null: none timed).
json slowest_transfer_gbps(const CaseSpec& c, const FlowSamples& f) {
  if (f.transfer_us.empty()) return nullptr;
  const double longest_us = *std::max_element(f.transfer_us.begin(), f.transfer_us.end());
  return longest_us > 0 ? json(double(transfer_bytes(c, f)) / (longest_us * 1e-6) / 1e9) : json();
}

// One flow: its ranks and GPUs, its own figures against its pair's peak.
json flow_entry(const CaseSpec& c, const FlowSamples& f, const GroupFacts& facts) {
  const Flow& fl = f.flow;
  const bool host_link = fl.src_rank == fl.dst_rank;
  const std::optional<double> peak = host_link ? std::nullopt : facts.peak(fl.src_rank, fl.dst_rank);
  const json bw = summary_json_or_null(f.gbps);
  return {{"src_rank", fl.src_rank},
          {"dst_rank", fl.dst_rank},
          {"src_gpu", facts.layout.gpu_of_rank.at(size_t(fl.src_rank))},
          {"dst_gpu", facts.layout.gpu_of_rank.at(size_t(fl.dst_rank))},
          {"same_device", is_same_device_flow(fl, facts.layout)},
          {"same_node", facts.layout.same_node(fl.src_rank, fl.dst_rank)},
          {"bytes", transfer_bytes(c, f)},
          {"bandwidth_gbps", bw},
          {"time_us", summary_json_or_null(f.time_us)},
          {"samples_gbps", f.gbps},
          {"peak_gbps", optional_json(peak)},
          {"pct_of_peak", pct_or_null(bw, peak)},
          {"iteration_time_us", tails_json(f.transfer_us)},
          {"gbps_min_iteration", slowest_transfer_gbps(c, f)}};
}

// Per GPU, per sample: bytes leaving (entering) it over the longest window of those flows.
json gpu_entries(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts, uint64_t iterations) {
  json out = json::array();
  for (const std::string& gpu : facts.layout.gpus()) {
    json ranks = json::array();
    for (int r = 0; r < facts.layout.size(); ++r)
      if (facts.layout.gpu_of_rank[size_t(r)] == gpu) ranks.push_back(r);
    auto median_rate = [&](bool egress) -> json {
      std::vector<double> rates;
      for (size_t s = 0; s < o.gbps.size(); ++s) {
        double total = 0, window = 0;
        for (const FlowSamples& f : o.flows) {
          const int end = egress ? f.flow.src_rank : f.flow.dst_rank;
          if (facts.layout.gpu_of_rank.at(size_t(end)) != gpu || s >= f.window_ns.size()) continue;
          total += double(transfer_bytes(c, f)) * double(iterations);
          window = std::max(window, f.window_ns[s]);
        }
        if (total > 0 && window > 0) rates.push_back(total / (window * 1e-9) / 1e9);
      }
      return rates.empty() ? json() : json(quantile(rates, 0.5));
    };
    out.push_back({{"uuid", gpu}, {"ranks", ranks}, {"egress_gbps", median_rate(true)}, {"ingress_gbps", median_rate(false)}});
  }
  return out;
}

// The v2 fields of a bandwidth row.
void add_group_fields(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts, json& row) {
  json flows = json::array();
  for (const FlowSamples& f : o.flows) flows.push_back(flow_entry(c, f, facts));
  row["flows"] = flows;
  const std::optional<double> peak = aggregate_peak(c, facts);
  const json bw = summary_json_or_null(o.gbps);
  row["aggregate"] = {{"bandwidth_gbps", bw},
                      {"samples_gbps", o.gbps},
                      {"peak_gbps", optional_json(peak)},
                      {"pct_of_peak", pct_or_null(bw, peak)}};
  row["gpus"] = o.flows.empty() ? json::array() : gpu_entries(c, o, facts, o.iterations);
  row["overlap"] = o.overlap.empty() ? json() : json(quantile(o.overlap, 0.5));
  row["pct_of_peak"] = pct_or_null(bw, peak);
}

// Latency under load: the load's method, pattern and flows with the figures it reached.
void add_load_fields(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts, json& row) {
  const LoadSpec& spec = *c.load;
  json flows = json::array();
  const CaseSpec load_case = c.load_case();
  for (const Flow& f : spec.flows) {
    FlowSamples samples = FlowSamples::named(f, 0);
    if (o.load)
      for (const FlowSamples& s : o.load->flows)
        if (s.flow == f) samples = s;
    flows.push_back(flow_entry(load_case, samples, facts));
  }
  row["load"] = {{"method", to_string(spec.method)},
                 {"direction", to_string(spec.direction)},
                 {"pattern", to_string(spec.pattern)},
                 {"bytes", spec.bytes},
                 {"flows", flows},
                 {"aggregate_gbps", o.load && !o.load->gbps.empty() ? json(o.load->gbps.back()) : json()},
                 {"covered", o.load ? o.load->covered : false},
                 {"verified", o.load ? o.load->verified : false}};
  if (o.load && !o.load->error.empty()) row["load"]["error"] = o.load->error;
}

}  // namespace

json identity_fields(const CaseSpec& c, const CaseOutcome& o) {
  const bool single = c.flows.size() == 1;
  json identity = {
      {"method", to_string(c.method)},
      {"direction", to_string(c.direction)},
      {"mode", to_string(c.mode)},
      {"bytes", c.bytes},
      {"src_rank", single ? json(c.src_rank()) : json()},
      {"dst_rank", single ? json(c.dst_rank()) : json()},
      {"pattern", to_string(c.pattern)},
      {"schedule", c.schedule ? json(to_string(*c.schedule)) : json()},
      {"round", optional_json(c.round)},
      {"protocol", optional_json(c.protocol)},
      {"atomic_type", optional_json(c.atomic_type)},
      {"atomic_pattern", optional_json(c.atomic_pattern)},
      {"ops_per_thread", optional_json(c.ops_per_thread)},
      {"hot_addresses", optional_json(c.hot_addresses)},
      {"buffer_pool_bytes", o.buffer_pool_bytes},
  };
  for (ShapeAxis a : kShapeAxes) identity[to_string(a)] = optional_json(c.axis_value(a));
  identity.update(identity_row_fields(c, o));
  return identity;
}

namespace {

// The case's identity and its raw samples: every row starts with these, whatever its method.
json row_head(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts) {
  json row = identity_fields(c, o);
  row.update({
      {"sms_used", optional_json(o.sms_used)},
      {"gbps_per_sm", json()},
      {"iterations", o.iterations},
      {"samples", o.gbps.size()},
      {"bandwidth_gbps", json()},
      {"time_us", json()},
      {"samples_gbps", o.gbps},
      {"pct_of_peak", json()},
      {"verified", o.verified},
      {"status", status_name(o.status)},
      {"allocator", facts.allocator},  // a condition of the run, not of the case: compare matches across it
      {"iteration_time_us", json()},
      {"tails_of", json()},
      {"window", json()},  // a burn-in's window (the burn-in sets it)
  });
  if (!o.error.empty()) row["error"] = o.error;
  // Every row names its flows (without figures until the case ran); the figures follow below.
  json flows = json::array();
  for (const Flow& f : c.flows) flows.push_back(flow_entry(c, FlowSamples::named(f, 0), facts));
  row["flows"] = flows;
  row["aggregate"] = json();
  row["gpus"] = json::array();
  row["overlap"] = json();
  return row;
}

// A latency row's statistics: latency_us, and where measured the issue interval, the cycles and
// latency_read's two timings.
json latency_row(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts, json row) {
  if (c.load) add_load_fields(c, o, facts, row);
  row["samples"] = o.latency_us.size();
  row["latency_us"] = json();
  row["samples_us"] = o.latency_us;
  if (o.status == CaseStatus::kOk && !o.latency_us.empty()) {
    row["latency_us"] = latency_stats(o.latency_us);
    row["tails_of"] = "sample";  // a sample's figure is already a mean over its round trips or loads
  }
  if (o.status == CaseStatus::kOk && !o.issue_interval_us.empty()) {
    row["issue_interval_us"] = latency_stats(o.issue_interval_us);
    row["samples_issue_interval_us"] = o.issue_interval_us;
  }
  if (o.status == CaseStatus::kOk && !o.cycles.empty()) {
    row["cycles"] = latency_stats(o.cycles);
    row["latency_at_peak_clock_us"] = latency_stats(o.latency_at_peak_clock_us);
  }
  if (o.status == CaseStatus::kOk && o.read_chase) row["read_chase"] = read_chase_json(c, *o.read_chase);
  return row;
}

// The row of the method's kind: interference, latency or bandwidth (every other kind).
json kind_row(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts) {
  json row = row_head(c, o, facts);
  if (is_interference(c.method)) return interference_row(c, o, std::move(row));
  if (is_latency(c.method)) return latency_row(c, o, facts, std::move(row));
  if (o.status != CaseStatus::kOk || o.gbps.empty()) return row;
  const Summary bw = summarize(o.gbps);
  row["bandwidth_gbps"] = to_json(bw);
  row["time_us"] = to_json(summarize(o.time_us));
  row["iteration_time_us"] = tails_json(o.transfer_us);
  if (!o.transfer_us.empty()) row["tails_of"] = "transfer";
  if (c.atomic_type) {
    std::vector<double> ops;  // operations per second, per sample
    for (double g : o.gbps) ops.push_back(g * 1e9 / double(atomic_type_bytes(*c.atomic_type)));
    row["atomic_ops_per_s"] = to_json(summarize(ops));
  }
  add_group_fields(c, o, facts, row);
  // Per SM of the GPUs driving the transfer: every driving lane runs the kernel's blocks.
  if (o.sms_used && *o.sms_used > 0) row["gbps_per_sm"] = bw.median / (*o.sms_used * double(c.flows.size()));
  return row;
}

}  // namespace

json result_row(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts) {
  json row = kind_row(c, o, facts);
  add_row_fields(c, o, row);
  return row;
}

json result_document(const json& meta, const std::vector<json>& rows, const json& summary, bool incomplete,
                     const std::string& incomplete_reason, const json& comparison) {
  json doc = {{"schema_version", kSchemaVersion}, {"incomplete", incomplete}, {"meta", meta}, {"results", rows}};
  if (incomplete) doc["incomplete_reason"] = incomplete_reason;
  if (!summary.is_null() && !summary.empty()) doc["summary"] = summary;
  if (!comparison.is_null() && !comparison.empty()) doc["comparison"] = comparison;
  return doc;
}

void write_json_atomically(const std::string& path, const json& doc, bool durable) {
  // Invalid UTF-8 (a command line or label with stray bytes) becomes U+FFFD instead of making
  // dump() throw after the whole sweep.
  write_file_atomically(path, doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n", durable);
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace p2pbench
