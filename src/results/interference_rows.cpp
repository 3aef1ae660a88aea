#include "results/interference_rows.hpp"

#include <algorithm>
#include <cstdio>

#include "config/interference_config.hpp"
#include "results/json_fields.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

using json = nlohmann::json;

std::optional<double> slowdown_pct(const std::vector<double>& alone, const std::vector<double>& together) {
  if (alone.empty() || together.empty()) return std::nullopt;
  const double a = quantile(alone, 0.5);
  if (a <= 0) return std::nullopt;
  return 100.0 * (1.0 - quantile(together, 0.5) / a);
}

std::optional<double> least_overlap(const InterferenceSamples& s) {
  if (s.overlap.empty()) return std::nullopt;
  return *std::min_element(s.overlap.begin(), s.overlap.end());
}

bool low_overlap(const InterferenceSamples& s) {
  const auto least = least_overlap(s);
  return least && *least < kMinInterferenceOverlap;
}

namespace {

// An identity field of every interference row: null in other methods' rows.
RowField identity_field(const char* name, RowFieldType type, const std::string& description,
                        std::vector<std::string> values, RowFieldValue value) {
  RowField f{name, type, "", "interference: " + description + "; null for other methods", std::move(values), true, true};
  f.value = value;
  return f;
}

json engine_of(const CaseSpec& c, const CaseOutcome&) { return c.engine ? json(to_string(*c.engine)) : json(); }
json workload_of(const CaseSpec& c, const CaseOutcome&) { return optional_json(c.workload); }
json sm_partition_of(const CaseSpec& c, const CaseOutcome&) { return c.sm_partition.value_or(0); }
json both_gpus_busy_of(const CaseSpec& c, const CaseOutcome&) { return c.both_gpus_busy.value_or(false); }
json transfer_priority_of(const CaseSpec& c, const CaseOutcome&) {
  if (!c.transfer_high_priority) return json();
  return *c.transfer_high_priority ? "highest" : "normal";
}

}  // namespace

std::vector<RowField> interference_fields() {
  RowField priority = identity_field("transfer_priority", RowFieldType::kText,
                                     "the priority of the transfer's streams (interference.transfer_high_priority: "
                                     "highest, the device's greatest; normal: the default)",
                                     {"normal", "highest"}, transfer_priority_of);
  priority.default_value = "normal";
  priority.label = "{} transfer priority";
  return {identity_field("engine", RowFieldType::kText, "the engine that moves the bytes", engine_names(), engine_of),
          identity_field("workload", RowFieldType::kText, "the workload beside the transfer", workload_names(), workload_of),
          identity_field("sm_partition", RowFieldType::kCount,
                         "SMs requested for the transfer's green context (0: no partition)", {}, sm_partition_of),
          identity_field("both_gpus_busy", RowFieldType::kFlag, "the workload ran on both GPUs", {}, both_gpus_busy_of),
          priority};
}

json interference_row(const CaseSpec&, const CaseOutcome& o, json row) {
  if (!o.interference || o.status != CaseStatus::kOk || o.gbps.empty()) return row;
  const InterferenceSamples& s = *o.interference;
  row["transfer_group_sms"] = optional_json(s.transfer_group_sms);
  row["workload_group_sms"] = optional_json(s.workload_group_sms);
  row["workload_unit"] = s.workload_unit;
  row["workload_description"] = s.workload_description;
  row["workload_gpus"] = s.workload_gpus;
  row["workload_alone"] = summary_json_or_null(s.workload_alone);
  row["samples_workload_alone"] = s.workload_alone;
  row["workload_partition_alone"] = summary_json_or_null(s.workload_partition_alone);
  row["samples_workload_partition_alone"] = s.workload_partition_alone;
  row["workload_together"] = summary_json_or_null(s.workload_together);
  row["samples_workload_together"] = s.workload_together;
  row["samples_workload_launches_together"] = s.workload_launches_together;
  row["transfer_alone_gbps"] = summary_json_or_null(s.transfer_alone_gbps);
  row["samples_transfer_alone_gbps"] = s.transfer_alone_gbps;
  row["transfer_together_gbps"] = summary_json_or_null(s.transfer_together_gbps);
  row["samples_transfer_together_gbps"] = s.transfer_together_gbps;
  row["workload_slowdown_pct"] = optional_json(slowdown_pct(s.workload_alone, s.workload_together));
  row["transfer_slowdown_pct"] = optional_json(slowdown_pct(s.transfer_alone_gbps, s.transfer_together_gbps));
  // The figures are of the together phase: the row says when the windows did not coincide.
  row["overlap"] = s.overlap.empty() ? json() : json(quantile(s.overlap, 0.5));
  row["overlap_min"] = optional_json(least_overlap(s));
  row["samples_overlap"] = s.overlap;
  if (low_overlap(s)) {
    char note[160];
    std::snprintf(note, sizeof note, "overlap below %.2f (least %.3f): the transfer and the workload did not run together for the whole window",
                  kMinInterferenceOverlap, *least_overlap(s));
    row["overlap_note"] = note;
  }
  row["bandwidth_gbps"] = to_json(summarize(o.gbps));
  row["time_us"] = to_json(summarize(o.time_us));
  // A phase's samples are whole runs of the transfer beside the workload: its tails are over them.
  row["iteration_time_us"] = tails_json(o.time_us);
  row["tails_of"] = "sample";
  return row;
}

}  // namespace p2pbench
