#include "checked_row.hpp"

#include <string>
#include <utility>

namespace p2pbench {

using nlohmann::json;

CheckedCase checked_row(const json& row) {
  CheckedCase c;
  c.identity = row;
  const std::string status = row.value("status", std::string("failed"));
  c.status = status == "ok" ? CaseStatus::kOk : status == "skipped" ? CaseStatus::kSkipped : CaseStatus::kFailed;
  c.error = row.contains("error") && row["error"].is_string() ? row["error"].get<std::string>() : "";
  for (const auto& [metric, samples] : {std::pair{"bandwidth_gbps", "samples_gbps"}, std::pair{"latency_us", "samples_us"}}) {
    if (!row.contains(metric) || !row[metric].is_object()) continue;
    c.metric = metric;
    for (const json& v : row.value(samples, json::array()))
      if (v.is_number()) c.samples.push_back(v.get<double>());
    if (c.samples.empty() && row[metric].contains("median") && row[metric]["median"].is_number())
      c.samples.push_back(row[metric]["median"].get<double>());
    break;
  }
  return c;
}

}  // namespace p2pbench
