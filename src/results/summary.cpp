#include "results/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "results/pair_matrix.hpp"
#include "results/result_writer.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

double median_of(const json& row) { return row["bandwidth_gbps"]["median"].get<double>(); }

json configuration_of(const json& row) {
  json c;
  for (const char* key : {"bytes", "src_rank", "dst_rank", "blocks", "threads", "unroll", "smem_bytes", "stages", "sms_used"})
    c[key] = row[key];
  c["bandwidth_gbps"] = median_of(row);
  return c;
}

}  // namespace

json summarize_rows(const std::vector<json>& rows) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::vector<const json*>> groups;
  std::vector<Key> order;
  for (const json& row : rows) {
    if (row["status"] != "ok" || row["bandwidth_gbps"].is_null()) continue;
    if (method_kind_of(row) == MethodKind::kInterference) continue;  // the trade table summarizes these
    if (!is_single_pair_row(row)) continue;  // a round's or a pattern's figure adds several pairs
    if (involves_same_device(row)) continue;  // a copy inside one GPU, not a P2P figure
    const Key key{row["method"], row["direction"], row["mode"]};
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&row);
  }
  json summary = json::array();
  for (const Key& key : order) {
    const auto& members = groups[key];
    const json* best = members.front();
    for (const json* r : members)
      if (median_of(*r) > median_of(*best)) best = r;
    json entry = {{"method", std::get<0>(key)},
                  {"direction", std::get<1>(key)},
                  {"mode", std::get<2>(key)},
                  {"best", configuration_of(*best)},
                  {"knee", json()}};
    // The knee: fewest SMs whose median reaches 90% of the best, at the best's message size
    // (a smaller message reaching 90% at some SM count says nothing about the large one).
    // Only where the sweep varied the SM count there: with one block count there is no knee.
    std::set<int64_t> block_counts;
    for (const json* r : members)
      if (r->at("bytes") == best->at("bytes") && !r->at("blocks").is_null()) block_counts.insert(r->at("blocks").get<int64_t>());
    const json* knee = nullptr;
    for (const json* r : members) {
      if (block_counts.size() < 2) break;
      if (r->at("sms_used").is_null() || r->at("bytes") != best->at("bytes") ||
          median_of(*r) < kKneeFraction * median_of(*best))
        continue;
      if (!knee || r->at("sms_used").get<int>() < knee->at("sms_used").get<int>()) knee = r;
    }
    if (knee) {
      entry["knee"] = configuration_of(*knee);
      entry["knee"]["fraction_of_best"] = median_of(*knee) / median_of(*best);
      entry["knee"]["threshold"] = kKneeFraction;
    }
    summary.push_back(entry);
  }
  return summary;
}

std::string summary_heading(const json& summary) {
  const bool any_knee = std::any_of(summary.begin(), summary.end(), [](const json& e) { return !e["knee"].is_null(); });
  return any_knee ? "Summary (best configuration; knee = fewest SMs reaching 90% of the best):"
                  : "Summary (best configuration):";
}

std::string comparison_heading(const json& comparison) {
  const bool any_baseline = std::any_of(comparison.begin(), comparison.end(), [](const json& e) {
    return !e["speedup_over_staged"].is_null() || !e["speedup_over_nccl"].is_null();
  });
  return std::string("Best one-way P2P method per size band (GB/s, 1 GB = 1e9 B") +
         (any_baseline ? "; speedup over the baselines):" : "):");
}

std::vector<std::string> summary_lines(const json& summary) {
  std::vector<std::string> lines;
  auto describe = [](const json& c) {
    std::string s = std::to_string(c["bytes"].get<uint64_t>()) + " B";
    for (const char* key : {"blocks", "threads", "unroll", "smem_bytes", "stages"})
      if (!c[key].is_null()) s += std::string(", ") + key + " " + std::to_string(c[key].get<uint64_t>());
    return s;
  };
  for (const json& e : summary) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-5s %-4s %-5s best %8.1f GB/s (%s)", e["method"].get<std::string>().c_str(),
                  e["direction"].get<std::string>().c_str(), e["mode"].get<std::string>().c_str(),
                  e["best"]["bandwidth_gbps"].get<double>(), describe(e["best"]).c_str());
    std::string line = buf;
    if (!e["knee"].is_null()) {
      std::snprintf(buf, sizeof buf, "; knee %d SMs at %.1f GB/s (>= 90%% of best)", e["knee"]["sms_used"].get<int>(),
                    e["knee"]["bandwidth_gbps"].get<double>());
      line += buf;
    }
    lines.push_back(line);
  }
  return lines;
}

namespace {

struct Band {
  uint64_t lo, hi;
  const char* name;
};
constexpr Band kBands[] = {{0, 64u << 10, "< 64 KiB"},
                           {64u << 10, 4u << 20, "64 KiB - 4 MiB"},
                           {4u << 20, 64u << 20, "4 - 64 MiB"},
                           {64u << 20, ~uint64_t(0), ">= 64 MiB"}};

// The two-sided baselines the best one-sided method is compared with, in the registry's order.
std::vector<std::string> baselines() {
  std::vector<std::string> names;
  for (const MethodInfo& m : method_registry())
    if (m.kind == MethodKind::kTwoSidedBaseline) names.push_back(m.name);
  return names;
}

bool is_p2p_bandwidth(const json& r) {
  return method_kind_of(r) == MethodKind::kCopy && r["mode"] == "uni" && r["status"] == "ok" && is_single_pair_row(r) &&
         !involves_same_device(r);
}

// The baseline's median at the same size and orientation, if measured.
std::optional<double> baseline_at(const std::vector<json>& rows, const std::string& method, const json& row) {
  for (const json& b : rows)
    if (b["method"] == method && b["mode"] == "uni" && b["status"] == "ok" && is_single_pair_row(b) && b["bytes"] == row["bytes"] &&
        b["src_rank"] == row["src_rank"] && b["dst_rank"] == row["dst_rank"])
      return b["bandwidth_gbps"]["median"].get<double>();
  return std::nullopt;
}

}  // namespace

json compare_methods(const std::vector<json>& rows) {
  const std::vector<std::string> compared_with = baselines();
  json out = json::array();
  for (const char* direction : {"push", "pull"})
    for (const Band& band : kBands) {
      const json* best = nullptr;
      for (const json& r : rows) {
        const uint64_t bytes = r["bytes"];
        if (!is_p2p_bandwidth(r) || r["direction"] != direction || bytes < band.lo || bytes >= band.hi) continue;
        if (!best || median_of(r) > median_of(*best)) best = &r;
      }
      if (!best) continue;
      json entry = {{"direction", direction}, {"band", band.name}, {"method", (*best)["method"]},
                    {"bytes", (*best)["bytes"]}, {"bandwidth_gbps", median_of(*best)},
                    {"pct_of_peak", best->value("pct_of_peak", json())}};
      for (const std::string& baseline : compared_with) {
        const auto base = baseline_at(rows, baseline, *best);
        entry["speedup_over_" + baseline] = base && *base > 0 ? json(median_of(*best) / *base) : json();
      }
      out.push_back(entry);
    }
  return out;
}

std::vector<std::string> comparison_lines(const json& comparison) {
  const std::vector<std::string> compared_with = baselines();
  std::vector<std::string> lines;
  for (const json& e : comparison) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-4s %-15s best %-4s at %llu B: %7.1f GB/s", e["direction"].get<std::string>().c_str(),
                  e["band"].get<std::string>().c_str(), e["method"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(e["bytes"].get<uint64_t>()), e["bandwidth_gbps"].get<double>());
    std::string line = buf;
    if (!e["pct_of_peak"].is_null()) {
      std::snprintf(buf, sizeof buf, " (%.1f%% of peak)", e["pct_of_peak"].get<double>());
      line += buf;
    }
    for (const std::string& baseline : compared_with) {
      const json& x = e["speedup_over_" + baseline];
      if (x.is_null()) continue;
      std::snprintf(buf, sizeof buf, ", %.2fx %s", x.get<double>(), baseline.c_str());
      line += buf;
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace p2pbench
