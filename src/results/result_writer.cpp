#include "results/result_writer.hpp"

#include <ctime>

#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "results/interference_rows.hpp"  // issue 13
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

json optional_number(const std::optional<int>& v) { return v ? json(*v) : json(); }
json optional_number(const std::optional<uint64_t>& v) { return v ? json(*v) : json(); }
json optional_text(const std::optional<std::string>& v) { return v ? json(*v) : json(); }

json latency_stats(const std::vector<double>& samples) {
  json j = to_json(summarize(samples));
  j["p95"] = quantile(samples, 0.95);
  return j;
}

const char* status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::kOk: return "ok";
    case CaseStatus::kFailed: return "failed";
    case CaseStatus::kSkipped: return "skipped";
  }
  return "failed";
}

}  // namespace

json result_row(const CaseSpec& c, const CaseOutcome& o, std::optional<double> peak_gbps) {
  const bool uni = c.mode == Mode::kUni;
  json row = {
      {"method", to_string(c.method)},
      {"direction", to_string(c.direction)},
      {"mode", to_string(c.mode)},
      {"bytes", c.bytes},
      {"src_rank", uni ? json(c.src_rank()) : json()},
      {"dst_rank", uni ? json(c.dst_rank()) : json()},
      {"blocks", optional_number(c.blocks)},
      {"threads", optional_number(c.threads)},
      {"unroll", optional_number(c.unroll)},
      {"smem_bytes", optional_number(c.smem_bytes)},
      {"stages", optional_number(c.stages)},
      {"protocol", optional_text(c.protocol)},
      {"atomic_type", optional_text(c.atomic_type)},
      {"atomic_pattern", optional_text(c.atomic_pattern)},
      {"ops_per_thread", optional_number(c.ops_per_thread)},
      {"hot_addresses", optional_number(c.hot_addresses)},
      {"sms_used", optional_number(o.sms_used)},
      {"gbps_per_sm", json()},
      {"buffer_pool_bytes", o.buffer_pool_bytes},
      {"iterations", o.iterations},
      {"samples", o.gbps.size()},
      {"bandwidth_gbps", json()},
      {"time_us", json()},
      {"samples_gbps", o.gbps},
      {"pct_of_peak", json()},
      {"verified", o.verified},
      {"status", status_name(o.status)},
  };
  if (!o.error.empty()) row["error"] = o.error;
  if (is_interference(c.method)) return interference_row(c, o, std::move(row));  // issue 13
  if (is_latency(c.method)) {
    row["samples"] = o.latency_us.size();
    row["latency_us"] = json();
    row["samples_us"] = o.latency_us;
    if (o.status == CaseStatus::kOk && !o.latency_us.empty()) row["latency_us"] = latency_stats(o.latency_us);
    if (o.status == CaseStatus::kOk && !o.issue_interval_us.empty()) {
      row["issue_interval_us"] = latency_stats(o.issue_interval_us);
      row["samples_issue_interval_us"] = o.issue_interval_us;
    }
    if (o.status == CaseStatus::kOk && !o.cycles.empty()) {
      row["cycles"] = latency_stats(o.cycles);
      row["latency_at_peak_clock_us"] = latency_stats(o.latency_at_peak_clock_us);
    }
    if (o.status == CaseStatus::kOk && !o.read_chase.is_null()) {  // latency_read: both timings' statistics
      json chase = o.read_chase;
      chase["kernel_timer_us"] = latency_stats(chase.at("samples_kernel_timer_us").get<std::vector<double>>());
      chase["events_us"] = latency_stats(chase.at("samples_events_us").get<std::vector<double>>());
      row["read_chase"] = chase;
    }
    return row;
  }
  if (o.status != CaseStatus::kOk || o.gbps.empty()) return row;
  const Summary bw = summarize(o.gbps);
  row["bandwidth_gbps"] = to_json(bw);
  row["time_us"] = to_json(summarize(o.time_us));
  // Per SM of the GPU(s) driving the transfer: bidir has two GPUs doing the work.
  if (c.atomic_type) {
    std::vector<double> ops;  // operations per second, per sample
    for (double g : o.gbps) ops.push_back(g * 1e9 / double(atomic_type_bytes(*c.atomic_type)));
    row["atomic_ops_per_s"] = to_json(summarize(ops));
  }
  if (peak_gbps && *peak_gbps > 0) row["pct_of_peak"] = 100.0 * bw.median / (*peak_gbps * (uni ? 1 : 2));
  if (o.sms_used && *o.sms_used > 0) row["gbps_per_sm"] = bw.median / (*o.sms_used * (uni ? 1 : 2));
  if (!uni) {
    row["overlap"] = quantile(o.overlap, 0.5);
    json dirs = json::array();
    for (const auto& d : o.directions)
      dirs.push_back({{"src_rank", d.src_rank},
                      {"dst_rank", d.dst_rank},
                      {"bandwidth_gbps", to_json(summarize(d.gbps))},
                      {"time_us", to_json(summarize(d.time_us))},
                      {"samples_gbps", d.gbps}});
    row["directions"] = dirs;
  }
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
