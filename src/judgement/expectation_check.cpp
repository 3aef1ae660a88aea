#include "judgement/expectation_check.hpp"

#include <algorithm>

#include "common/text_format.hpp"
#include "results/json_fields.hpp"
#include "results/method_row_fields.hpp"
#include "results/result_writer.hpp"
#include "stats/statistics.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

using nlohmann::json;

namespace {

constexpr ExpectationMetric kMetrics[] = {{"bandwidth_gbps", "floor", "GB/s", true},
                                          {"latency_us", "ceiling", "us", false}};

// The row's field; a row without a method's identity field (written before the field existed)
// ran on its default (host-link rows: pinned, local), which its expectation names.
json field_of(const json& identity, const std::string& key) {
  if (identity.contains(key) && !identity[key].is_null()) return identity[key];
  const auto method = identity.contains("method") && identity["method"].is_string()
                          ? parse_method(identity["method"].get<std::string>())
                          : std::nullopt;
  return method ? identity_default(*method, key) : json();
}

bool matches(const json& match, const json& identity) {
  for (const auto& [key, value] : match.items()) {
    const json field = field_of(identity, key);
    if (value.is_null() ? !field.is_null() : field != value) return false;
  }
  return true;
}

// "ce push uni 1 GiB blocks=132 threads=512" from the match keys.
std::string describe(const json& match) {
  std::string out;
  for (const char* key : {"method", "direction", "mode"})
    if (match.contains(key) && match[key].is_string()) out += (out.empty() ? "" : " ") + match[key].get<std::string>();
  if (match.contains("bytes") && match["bytes"].is_number_integer() && match["bytes"] >= 0)
    out += " " + format_size(match["bytes"].get<uint64_t>());
  for (const auto& [key, value] : match.items()) {
    if (key == "method" || key == "direction" || key == "mode" || key == "bytes" || value.is_null()) continue;
    if (key == "src_rank" || key == "dst_rank" || key == "buffer_pool_bytes") continue;  // rarely differ
    out += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

std::string number(double v) { return text_format("%.4g", v); }

JudgedCase judge(const CheckedCase& c, const json& entry) {
  const ExpectationMetric& m = *expectation_metric(entry["metric"]);  // validate_expectations let no other through
  JudgedCase j;
  j.result = "FAIL";
  const std::string& name = j.name = describe(entry["match"]);
  const double limit = entry[m.limit].get<double>();
  const std::string limit_text = std::string(m.limit) + " " + number(limit) + " " + m.unit;
  if (c.status != CaseStatus::kOk) {
    j.note = std::string(status_name(c.status)) + (c.error.empty() ? "" : ": " + c.error);
    j.line = "FAIL " + name + ": the case " + j.note + " (" + limit_text + ")";
    return j;
  }
  if (c.metric != m.name || c.samples.empty()) {
    j.note = std::string("the case has no ") + m.name + " figures";
    j.line = "FAIL " + name + ": " + j.note + " (" + limit_text + ")";
    return j;
  }
  j.figure = quantile(c.samples, 0.5);
  j.margin = m.higher_is_better ? *j.figure - limit : limit - *j.figure;
  j.result = *j.margin >= 0 ? "PASS" : "FAIL";
  if (limit != 0) j.margin_pct = *j.margin / limit * 100.0;
  j.line = text_format("%s %s: %s %s %s %s, margin %+.3g %s (%s)", j.result.c_str(), name.c_str(),
                       number(*j.figure).c_str(), m.unit, m.higher_is_better ? ">=" : "<=", limit_text.c_str(),
                       *j.margin, m.unit, j.margin_pct ? text_format("%+.1f%%", *j.margin_pct).c_str() : "-");
  return j;
}

std::string summary_of(const ExpectationReport& r) {
  const JudgedCase* smallest = nullptr;
  for (const JudgedCase& j : r.judged)
    if (j.margin_pct && (!smallest || *j.margin_pct < *smallest->margin_pct)) smallest = &j;
  std::string worst;
  if (smallest) worst = text_format("; smallest margin %+.1f%% (%s)", *smallest->margin_pct, smallest->name.c_str());
  return text_format("check %s: %d PASS, %d FAIL of %d cases with an expectation%s; %d rows without expectation; "
                     "%zu expectations not measured",
                     r.failed ? "FAIL" : "PASS", r.passed, r.failed, r.passed + r.failed, worst.c_str(),
                     r.without_expectation, r.not_measured.size());
}

}  // namespace

const ExpectationMetric* expectation_metric(const json& name) {
  for (const ExpectationMetric& m : kMetrics)
    if (name == m.name) return &m;
  return nullptr;
}

CheckedCase checked_case(const CaseResult& r) {
  CheckedCase c{identity_fields(r.spec, r.outcome), r.outcome.status, r.outcome.error, std::nullopt, {}};
  if (const std::vector<double>* samples = figure_samples(r)) {
    c.metric = is_latency(r.spec.method) ? "latency_us" : "bandwidth_gbps";
    c.samples = *samples;
  }
  return c;
}

ExpectationReport check_expectations(const json& expectations, const std::vector<CheckedCase>& cases,
                                     const std::string& pair_class) {
  ExpectationReport report;
  const json& entries = expectations["expectations"];
  std::vector<bool> used(entries.size(), false);
  for (size_t i = 0; i < cases.size(); ++i) {
    const CheckedCase& c = cases[i];
    const bool ok = c.status == CaseStatus::kOk;
    bool found = false;
    for (size_t k = 0; k < entries.size(); ++k) {
      const json& e = entries[k];
      if (e["pair_class"] != pair_class || !matches(e["match"], c.identity)) continue;
      if (ok && c.metric && e["metric"] != *c.metric) continue;
      found = used[k] = true;
      JudgedCase j = judge(c, e);
      j.case_index = i;
      j.entry_index = k;
      (j.result == "PASS" ? report.passed : report.failed) += 1;
      report.judged.push_back(std::move(j));
    }
    if (!found && ok && c.metric) {
      ++report.without_expectation;
      JudgedCase j;
      j.case_index = i;
      j.result = "NO EXPECTATION";
      report.judged.push_back(std::move(j));
    }
  }
  for (size_t k = 0; k < entries.size(); ++k)
    if (!used[k] && entries[k]["pair_class"] == pair_class) {
      report.not_measured.push_back(k);
      report.not_measured_lines.push_back(describe(entries[k]["match"]) + " " + entries[k]["metric"].get<std::string>());
    }
  report.summary = summary_of(report);
  return report;
}

json to_json(const ExpectationReport& report, const std::string& pair_class) {
  json judged = json::array();
  for (const JudgedCase& j : report.judged)
    judged.push_back({{"case", j.case_index}, {"entry", optional_json(j.entry_index)}, {"result", j.result},
                      {"figure", optional_json(j.figure)}, {"margin", optional_json(j.margin)},
                      {"margin_pct", optional_json(j.margin_pct)}, {"note", j.note}, {"line", j.line}});
  return {{"pair_class", pair_class}, {"judged", judged},        {"not_measured", report.not_measured},
          {"passed", report.passed},  {"failed", report.failed}, {"without_expectation", report.without_expectation},
          {"summary", report.summary}};
}

}  // namespace p2pbench
