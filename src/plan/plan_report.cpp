#include "plan/plan_report.hpp"

#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "common/text_format.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

// At most this many flow sets are listed (every case is listed anyway).
constexpr size_t kMostFlowSetLines = 200;

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0, double e = 0) {
  char text[256];
  std::snprintf(text, sizeof text, fmt, a, b, c, d, e);
  return text;
}

std::string plural(size_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string pattern_label(const CaseSpec& c) {
  std::string label = to_string(c.pattern);
  if (c.schedule && *c.schedule != Schedule::kSequential) label += std::string(":") + to_string(*c.schedule);
  return label;
}

std::string flow_list(const std::vector<Flow>& flows) {
  std::string out;
  for (const Flow& f : flows) out += (out.empty() ? "" : " ") + std::to_string(f.src_rank) + "->" + std::to_string(f.dst_rank);
  return out;
}

std::optional<std::string> skip_reason(const CaseSpec& c, const GroupLayout& layout) {
  if (auto why = static_skip_reason(c)) return why;
  return group_skip_reason(c, layout);
}

std::string group_line(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                       const std::string& origin) {
  size_t skipped = 0;
  for (const CaseSpec& c : cases) skipped += skip_reason(c, layout) ? 1 : 0;
  const auto nodes = layout.nodes();
  std::string text = "group: " + plural(size_t(layout.size()), "rank") + " on " + plural(layout.gpus().size(), "GPU") + ", " +
                     plural(nodes.size(), "node") + " (" + origin + ")\n";
  text += std::to_string(cases.size()) + " cases (" + std::to_string(skipped) + " skipped up front), " +
          std::to_string(config.samples) + " samples each, " + format(">= %.3g ms per sample", config.min_sample_time_ms) +
          (config.verify ? ", every byte verified" : ", NOT verified") + "\n";
  return text;
}

// "  ce push uni: 18 cases: matrix:rounds 14, matrix:alone_check 4" per method, direction, mode.
std::string pattern_counts(const std::vector<CaseSpec>& cases, const GroupLayout& layout) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, size_t>>> counts;
  std::map<std::string, size_t> totals, skipped;
  for (const CaseSpec& c : cases) {
    const std::string group = std::string(to_string(c.method)) + " " + to_string(c.direction) + " " + to_string(c.mode);
    if (!counts.count(group)) order.push_back(group);
    auto& list = counts[group];
    const std::string label = pattern_label(c);
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& p) { return p.first == label; });
    if (it == list.end()) list.push_back({label, 1}); else ++it->second;
    ++totals[group];
    skipped[group] += skip_reason(c, layout) ? 1 : 0;
  }
  std::string text = "cases by pattern:\n";
  for (const std::string& group : order) {
    text += "  " + group + ": " + std::to_string(totals[group]) + " cases";
    if (skipped[group]) text += " (" + std::to_string(skipped[group]) + " skipped)";
    std::string parts;
    for (const auto& [label, n] : counts[group]) parts += (parts.empty() ? "" : ", ") + label + " " + std::to_string(n);
    text += ": " + parts + "\n";
  }
  return text;
}

// Each distinct flow set of the patterns (not the sequential matrix: its case names say it all).
std::string flow_sets(const std::vector<CaseSpec>& cases) {
  std::set<std::tuple<int, std::string, int, std::string>> seen;
  std::string lines;
  size_t listed = 0, left_out = 0;
  for (const CaseSpec& c : cases) {
    if (c.pattern == Pattern::kMatrix && (!c.schedule || *c.schedule == Schedule::kSequential)) continue;
    if (is_interference(c.method) || runs_on_own_gpu(c.method)) continue;
    const std::string flows = flow_list(c.flows);
    if (!seen.insert({int(c.mode), pattern_label(c), c.round.value_or(-1), flows}).second) continue;
    if (listed == kMostFlowSetLines) {
      ++left_out;
      continue;
    }
    ++listed;
    lines += "  " + std::string(to_string(c.mode)) + " " + pattern_label(c) +
             (c.round ? " round " + std::to_string(*c.round) : "") + " (" + plural(c.flows.size(), "flow") + "): " + flows + "\n";
  }
  if (lines.empty()) return "";
  if (left_out) lines += "  ... and " + std::to_string(left_out) + " more flow sets (every case is listed below)\n";
  return "flow sets (each runs at every size and kernel shape of its methods):\n" + lines;
}

std::string memory_lines(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout) {
  const DeviceMemoryNeed need = device_memory_need(config, cases, layout);
  return "memory: F x (1 + D) x ranks on a GPU + 256 MiB = " + format_size(need.buffer_bytes) + " x (1 + " +
         std::to_string(need.destination_slots) + ") x " + std::to_string(need.ranks_on_busiest_gpu) + " + 256 MiB = " +
         format_size(need.per_gpu_bytes) + " on the busiest GPU\n" +
         "  (F: the largest buffer footprint; D: the most flows one rank receives at once, its destination slots)\n";
}

std::string estimate_lines(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout) {
  if (config.burn_in.enabled())  // its length is the duration: each case fills its share of every window
    return text_format("estimated: about %.0f s: a burn-in of %d windows of %.1f s, every case of the plan in each, about "
                       "%.2f s a case a window\n",
                  config.burn_in.duration_s, config.burn_in.windows(), config.burn_in.window_s,
                  config.burn_in.window_s / double(std::max<size_t>(cases.size(), 1)));
  const CaseCostModel costs;
  const SweepEstimate e = estimate(config, cases, layout, costs);
  return format(e.seconds < 1 ? "estimated: about %.2f s" : e.seconds < 10 ? "estimated: about %.1f s" : "estimated: about %.0f s",
                e.seconds) +
         format(": set-up %.1f s (%.2f ms a case), transfers %.1f s, warm-up %.1f s", e.setup_seconds, costs.per_case_s * 1e3,
                e.transfer_seconds, e.warmup_seconds) +
         format(", verification %.1f s; %.1f GB moved (1 GB = 1e9 B)\n", e.verify_seconds, e.bytes_moved / 1e9) +
         format("  from costs measured on two H200 (results/h200-nv18; CaseCostModel in plan/estimate.hpp): a case's "
                "transfer is bound by its busiest GPU, %.0f GB/s out and %.0f GB/s in to other GPUs, %.0f GB/s within one\n",
                costs.link_gbps, costs.link_gbps, costs.same_gpu_gbps);
}

std::string case_lines(const std::vector<CaseSpec>& cases, const GroupLayout& layout) {
  std::string text;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto skip = skip_reason(cases[i], layout);
    char number[32];
    std::snprintf(number, sizeof number, "%5zu  ", i + 1);
    std::string name = cases[i].name();
    if (name.size() < 70) name.resize(70, ' ');
    std::string size = format_size(cases[i].bytes);
    if (size.size() < 12) size.insert(0, 12 - size.size(), ' ');
    text += number + name + " " + size + (skip ? "  skipped: " + *skip : "") + "\n";
  }
  return text;
}

}  // namespace

std::string describe_plan(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                          const std::string& layout_origin) {
  std::string text = "p2pbench dry run: config '" + config.label + "' is valid\n";
  text += group_line(config, cases, layout, layout_origin);
  text += pattern_counts(cases, layout);
  text += flow_sets(cases);
  text += memory_lines(config, cases, layout);
  text += estimate_lines(config, cases, layout);
  text += "checked: the config's keys and kernel shapes, " + std::to_string(cases.size()) + " cases <= " +
          std::to_string(kMaxCases) + ", the patterns' ranks within the group, buffer sizes within 64 bits\n";
  text += "NOT checked without a GPU (the run checks them):\n";
  for (const std::string& line : checks_needing_a_gpu(config, cases, layout)) text += "  - " + line + "\n";
  return text + "\n" + case_lines(cases, layout);
}

}  // namespace p2pbench
