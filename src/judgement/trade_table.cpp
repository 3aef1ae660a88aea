#include "judgement/trade_table.hpp"

#include <algorithm>
#include <map>

#include "common/text_format.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

bool measured(const json& r) { return r.value("status", "") == "ok" && r.contains("workload_together") && !r["workload_together"].is_null(); }

double median(const json& r, const char* key) { return r[key]["median"].get<double>(); }

std::string spread(const json& r, const char* key) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f..%.1f", r[key]["min"].get<double>(), r[key]["max"].get<double>());
  return text;
}

// Rows of one trade curve share everything but the partition.
std::string curve_of(const json& r) {
  std::string key = r["workload"].get<std::string>() + " beside " + r["engine"].get<std::string>() + " " +
                    r["direction"].get<std::string>() + " " + r["mode"].get<std::string>() + " " + format_size(r["bytes"]);
  for (const char* axis : {"blocks", "threads", "unroll", "smem_bytes", "stages"})
    if (r.contains(axis) && !r[axis].is_null()) key += std::string(" ") + axis + ":" + std::to_string(r[axis].get<uint64_t>());
  if (r.value("both_gpus_busy", false)) key += " (both GPUs busy)";
  return key;
}

std::string partition_text(const json& r) {
  const int k = r["sm_partition"].get<int>();
  if (k == 0) return "all";
  if (r["transfer_group_sms"].is_null()) return std::to_string(k);
  const int got = r["transfer_group_sms"].get<int>();
  return got == k ? std::to_string(k) : std::to_string(k) + "->" + std::to_string(got);
}

void print_row(std::FILE* out, const json& r) {
  if (!measured(r)) {
    std::fprintf(out, "  %8s  %s%s\n", std::to_string(r["sm_partition"].get<int>()).c_str(), r["status"].get<std::string>().c_str(),
                 r.contains("error") ? (": " + r["error"].get<std::string>()).c_str() : "");
    return;
  }
  const std::string group_alone = r["workload_partition_alone"].is_null() ? "-" : [&] {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f", median(r, "workload_partition_alone"));
    return std::string(t);
  }();
  std::fprintf(out, "  %8s %9.1f %9.1f %15s %6.1f%% %9.1f %9s %9.1f %15s %6.1f%% %7.3f%s\n", partition_text(r).c_str(),
               median(r, "transfer_alone_gbps"), median(r, "transfer_together_gbps"), spread(r, "transfer_together_gbps").c_str(),
               r["transfer_slowdown_pct"].get<double>(), median(r, "workload_alone"), group_alone.c_str(),
               median(r, "workload_together"), spread(r, "workload_together").c_str(), r["workload_slowdown_pct"].get<double>(),
               r["overlap_min"].get<double>(), r.contains("overlap_note") ? "  LOW OVERLAP" : "");
}

void print_header(std::FILE* out, const std::string& title, const std::string& unit) {
  std::fprintf(out, "\n%s   [link GB/s, 1 GB = 1e9 B; workload %s; medians, min..max over samples]\n", title.c_str(), unit.c_str());
  std::fprintf(out, "  %8s %9s %9s %15s %7s %9s %9s %9s %15s %7s %7s\n", "K SMs", "link", "link", "together", "link",
               "wl alone", "wl alone", "wl", "together", "wl", "overlap");
  std::fprintf(out, "  %8s %9s %9s %15s %7s %9s %9s %9s %15s %7s %7s\n", "", "alone", "together", "min..max", "slower",
               "whole GPU", "in group", "together", "min..max", "slower", "least");
}

}  // namespace

void print_interference_table(std::FILE* out, const std::string& title, const std::vector<json>& rows) {
  if (rows.empty()) return;
  std::string unit = "figure";
  for (const json& r : rows)
    if (r.contains("workload_unit")) unit = r["workload_unit"];
  print_header(out, title, unit);
  for (const json& r : rows) print_row(out, r);
  std::fflush(out);
}

json trade_findings(const std::vector<json>& rows) {
  std::map<std::string, std::vector<const json*>> curves;
  std::vector<std::string> order;
  for (const json& r : rows) {
    if (r.value("method", "") != "interference" || !measured(r)) continue;
    const std::string key = curve_of(r);
    if (!curves.count(key)) order.push_back(key);
    curves[key].push_back(&r);
  }
  json findings = json::array();
  for (const std::string& key : order) {
    const auto& members = curves[key];
    double best_link = 0;
    for (const json* r : members) best_link = std::max(best_link, median(*r, "transfer_alone_gbps"));
    const json* choice = nullptr;
    for (const json* r : members)
      if (median(*r, "transfer_together_gbps") >= kLinkKeptFraction * best_link &&
          (!choice || median(*r, "workload_together") > median(*choice, "workload_together")))
        choice = r;
    json f = {{"curve", key}, {"engine", members.front()->at("engine")}, {"workload", members.front()->at("workload")},
              {"workload_unit", members.front()->at("workload_unit")}, {"best_link_alone_gbps", best_link},
              {"keeps_link", json()}};
    if (choice)
      f["keeps_link"] = {{"sm_partition", choice->at("sm_partition")},
                         {"transfer_group_sms", choice->at("transfer_group_sms")},
                         {"link_gbps", median(*choice, "transfer_together_gbps")},
                         {"workload_figure", median(*choice, "workload_together")},
                         {"workload_slowdown_pct", choice->at("workload_slowdown_pct")}};
    if (members.front()->at("engine") == "ce") f["copy_engine_cost_pct"] = members.front()->at("workload_slowdown_pct");
    findings.push_back(f);
  }
  return findings;
}

void print_trade_table(std::FILE* out, const std::vector<json>& rows) {
  std::map<std::string, std::vector<json>> curves;
  std::vector<std::string> order;
  for (const json& r : rows) {
    if (r.value("method", "") != "interference") continue;
    const std::string key = curve_of(r);
    if (!curves.count(key)) order.push_back(key);
    curves[key].push_back(r);
  }
  if (order.empty()) return;
  std::fprintf(out, "\nTrade table: the transfer's SM group (K, requested->granted) against link and workload figures\n");
  for (const std::string& key : order) {
    std::vector<json>& members = curves[key];
    std::stable_sort(members.begin(), members.end(),
                     [](const json& a, const json& b) { return a["sm_partition"].get<int>() < b["sm_partition"].get<int>(); });
    std::string unit = "figure";
    for (const json& r : members)
      if (r.contains("workload_unit")) unit = r["workload_unit"];
    print_header(out, key, unit);
    for (const json& r : members) print_row(out, r);
  }
  std::fprintf(out, "\nFindings (keeps the link: >= %.0f%% of the curve's best transfer-alone GB/s beside the workload):\n",
               100 * kLinkKeptFraction);
  for (const json& f : trade_findings(rows)) {
    const std::string unit = f["workload_unit"];
    if (f.contains("copy_engine_cost_pct") && !f["copy_engine_cost_pct"].is_null())
      std::fprintf(out, "  %s: the copy engine costs the workload %.1f%%\n", f["curve"].get<std::string>().c_str(),
                   f["copy_engine_cost_pct"].get<double>());
    else if (f["keeps_link"].is_null())
      std::fprintf(out, "  %s: no K keeps %.0f%% of %.1f GB/s\n", f["curve"].get<std::string>().c_str(), 100 * kLinkKeptFraction,
                   f["best_link_alone_gbps"].get<double>());
    else {
      const json& k = f["keeps_link"];
      const int requested = k["sm_partition"].get<int>();
      const int granted = k["transfer_group_sms"].is_null() ? requested : k["transfer_group_sms"].get<int>();
      const std::string which = requested == 0 ? "all (no partition)"
                                : granted == requested ? std::to_string(requested)
                                                       : std::to_string(requested) + " (granted " + std::to_string(granted) + " SMs)";
      std::fprintf(out, "  %s: K = %s keeps %.1f of %.1f GB/s with the most workload: %.1f %s (%.1f%% slower than alone)\n",
                   f["curve"].get<std::string>().c_str(), which.c_str(),
                   k["link_gbps"].get<double>(), f["best_link_alone_gbps"].get<double>(), k["workload_figure"].get<double>(),
                   unit.c_str(), k["workload_slowdown_pct"].get<double>());
    }
  }
  std::fflush(out);
}

}  // namespace p2pbench
