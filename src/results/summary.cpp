#include "results/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/text_format.hpp"
#include "results/json_fields.hpp"
#include "results/result_writer.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

// A summarized case: its median and whether its buffers fit in its GPU's L2 (a copy within one
// GPU only; null where that is not known or not asked).
struct Member {
  const CaseResult* result;
  double median;
  std::optional<bool> fits_in_l2;
};

// A copy within one GPU moves its bytes from one buffer to another of the same GPU: both sit in
// its L2 when twice the bytes fit.
std::optional<bool> fits_in_l2(const CaseResult& r, const GroupFacts& facts) {
  if (!method_info(r.spec.method).copies_within_gpu) return std::nullopt;
  const auto l2 = facts.l2_of(r.spec.src_rank());
  if (!l2 || *l2 == 0) return std::nullopt;
  return 2 * r.spec.bytes <= *l2;
}

// The fastest member, from those that do not fit in the L2 where any of them was measured.
const Member& best_of(const std::vector<Member>& members) {
  const bool any_beyond_l2 =
      std::any_of(members.begin(), members.end(), [](const Member& m) { return m.fits_in_l2 == false; });
  const Member* best = nullptr;
  for (const Member& m : members) {
    if (any_beyond_l2 && m.fits_in_l2 == true) continue;
    if (!best || m.median > best->median) best = &m;
  }
  return *best;
}

json configuration_of(const Member& m) {
  const CaseSpec& c = m.result->spec;
  const bool single = c.flows.size() == 1;
  json configuration = {{"bytes", c.bytes},
                        {"src_rank", single ? json(c.src_rank()) : json()},
                        {"dst_rank", single ? json(c.dst_rank()) : json()},
                        {"sms_used", optional_json(m.result->outcome.sms_used)},
                        {"bandwidth_gbps", m.median}};
  for (ShapeAxis a : kShapeAxes) configuration[to_string(a)] = optional_json(c.axis_value(a));
  if (m.fits_in_l2) configuration["fits_in_l2"] = *m.fits_in_l2;
  for (const OwnFigure& f : own_figures(*m.result))
    configuration["own_figures"].push_back({{"name", f.name}, {"unit", f.unit}, {"median", f.median}});
  return configuration;
}

// The knee: fewest SMs whose median reaches 90% of the best, at the best's message size (a
// smaller message reaching 90% at some SM count says nothing about the large one). Only where
// the sweep varied the SM count there: with one block count there is no knee.
const Member* knee_of(const std::vector<Member>& members, const Member& best) {
  const uint64_t bytes = best.result->spec.bytes;
  std::set<int> block_counts;
  for (const Member& m : members)
    if (m.result->spec.bytes == bytes && m.result->spec.blocks) block_counts.insert(*m.result->spec.blocks);
  if (block_counts.size() < 2) return nullptr;
  const Member* knee = nullptr;
  for (const Member& m : members) {
    const auto& sms = m.result->outcome.sms_used;
    if (!sms || m.result->spec.bytes != bytes || m.median < kKneeFraction * best.median) continue;
    if (!knee || *sms < *knee->result->outcome.sms_used) knee = &m;
  }
  return knee;
}

}  // namespace

json summarize_cases(const std::vector<CaseResult>& cases, const GroupFacts& facts) {
  using Key = std::tuple<Method, Direction, Mode>;
  std::map<Key, std::vector<Member>> groups;
  std::vector<Key> order;
  for (const CaseResult& r : cases) {
    const auto median = median_gbps(r);
    if (!median) continue;  // failed, skipped, or no bandwidth of its own (latency; interference: the trade table's)
    if (!is_single_pair(r.spec)) continue;  // a round's or a pattern's figure adds several pairs
    if (involves_same_device(r.spec, facts.layout)) continue;  // a copy inside one GPU, not a P2P figure
    const Key key{r.spec.method, r.spec.direction, r.spec.mode};
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back({&r, *median, fits_in_l2(r, facts)});
  }
  json summary = json::array();
  for (const Key& key : order) {
    const std::vector<Member>& members = groups[key];
    const Member* best = &best_of(members);
    json entry = {{"method", to_string(std::get<0>(key))},
                  {"direction", to_string(std::get<1>(key))},
                  {"mode", to_string(std::get<2>(key))},
                  {"best", configuration_of(*best)},
                  {"knee", json()}};
    if (const Member* knee = knee_of(members, *best)) {
      entry["knee"] = configuration_of(*knee);
      entry["knee"]["fraction_of_best"] = knee->median / best->median;
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
    for (ShapeAxis a : kShapeAxes) {
      const char* key = to_string(a);
      if (c.contains(key) && !c[key].is_null()) s += std::string(", ") + key + " " + std::to_string(c[key].get<uint64_t>());
    }
    if (c.value("fits_in_l2", false)) s += ", both buffers in the L2: no larger size ran";
    return s;
  };
  auto own_figures_text = [](const json& c) {  // gemm: "; 803.7 TFLOP/s"
    std::string s;
    for (const json& f : c.value("own_figures", json::array()))
      s += "; " + text_format("%.1f", f["median"].get<double>()) + " " + f["unit"].get<std::string>();
    return s;
  };
  for (const json& e : summary) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-5s %-4s %-5s best %8.1f GB/s%s (%s)", e["method"].get<std::string>().c_str(),
                  e["direction"].get<std::string>().c_str(), e["mode"].get<std::string>().c_str(),
                  e["best"]["bandwidth_gbps"].get<double>(), own_figures_text(e["best"]).c_str(),
                  describe(e["best"]).c_str());
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

// A one-way figure of one pair of two GPUs by a one-sided copy method.
bool is_p2p_bandwidth(const CaseResult& r, const GroupLayout& layout) {
  return method_info(r.spec.method).kind == MethodKind::kCopy && r.spec.mode == Mode::kUni && median_gbps(r) &&
         is_single_pair(r.spec) && !involves_same_device(r.spec, layout);
}

// The baseline's median at the same size and orientation, if measured.
std::optional<double> baseline_at(const std::vector<CaseResult>& cases, const std::string& method, const CaseSpec& like) {
  for (const CaseResult& b : cases)
    if (to_string(b.spec.method) == method && b.spec.mode == Mode::kUni && is_single_pair(b.spec) &&
        b.spec.bytes == like.bytes && b.spec.src_rank() == like.src_rank() && b.spec.dst_rank() == like.dst_rank())
      if (const auto median = median_gbps(b)) return median;
  return std::nullopt;
}

}  // namespace

json compare_methods(const std::vector<CaseResult>& cases, const GroupFacts& facts) {
  const std::vector<std::string> compared_with = baselines();
  json out = json::array();
  for (const Direction direction : {Direction::kPush, Direction::kPull})
    for (const Band& band : kBands) {
      const CaseResult* best = nullptr;
      double best_median = 0;
      for (const CaseResult& r : cases) {
        const uint64_t bytes = r.spec.bytes;
        if (!is_p2p_bandwidth(r, facts.layout) || r.spec.direction != direction || bytes < band.lo || bytes >= band.hi) continue;
        const double median = *median_gbps(r);
        if (!best || median > best_median) best = &r, best_median = median;
      }
      if (!best) continue;
      json entry = {{"direction", to_string(direction)}, {"band", band.name}, {"method", to_string(best->spec.method)},
                    {"bytes", best->spec.bytes}, {"bandwidth_gbps", best_median},
                    {"pct_of_peak", optional_json(pct_of_peak(best_median, aggregate_peak(best->spec, facts)))}};
      for (const std::string& baseline : compared_with) {
        const auto base = baseline_at(cases, baseline, best->spec);
        entry["speedup_over_" + baseline] = base && *base > 0 ? json(best_median / *base) : json();
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
