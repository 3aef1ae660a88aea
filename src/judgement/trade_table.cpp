#include "judgement/trade_table.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "common/text_format.hpp"
#include "results/interference_rows.hpp"
#include "results/result_writer.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {

// The interference figures of a case that ran with its workload beside it, or null.
const InterferenceSamples* measured(const CaseResult& r) {
  const CaseOutcome& o = r.outcome;
  if (o.status != CaseStatus::kOk || !o.interference || o.gbps.empty() || o.interference->workload_together.empty())
    return nullptr;
  return &*o.interference;
}

double median(const std::vector<double>& samples) { return summarize(samples).median; }  // as the row writes it

std::string spread(const std::vector<double>& samples) {
  const Summary s = summarize(samples);
  return text_format("%.1f..%.1f", s.min, s.max);
}

std::string percent(const std::optional<double>& v) { return v ? text_format("%6.1f%%", *v) : "     -"; }

// Cases of one trade curve share everything but the partition.
std::string curve_of(const CaseSpec& c) {
  std::string key = c.workload.value_or("?") + " beside " + (c.engine ? to_string(*c.engine) : "?") + " " +
                    to_string(c.direction) + " " + to_string(c.mode) + " " + format_size(c.bytes);
  for (ShapeAxis a : kShapeAxes)
    if (auto value = c.axis_value(a)) key += std::string(" ") + to_string(a) + ":" + std::to_string(*value);
  if (c.both_gpus_busy.value_or(false)) key += " (both GPUs busy)";
  return key;
}

std::string partition_text(int k, const InterferenceSamples& s) {
  if (k == 0) return "all";
  if (!s.transfer_group_sms) return std::to_string(k);
  const int got = *s.transfer_group_sms;
  return got == k ? std::to_string(k) : std::to_string(k) + "->" + std::to_string(got);
}

void print_row(std::FILE* out, const CaseResult& r) {
  const int k = r.spec.sm_partition.value_or(0);
  const InterferenceSamples* s = measured(r);
  if (!s) {
    std::fprintf(out, "  %8s  %s%s\n", std::to_string(k).c_str(), status_name(r.outcome.status),
                 r.outcome.error.empty() ? "" : (": " + r.outcome.error).c_str());
    return;
  }
  const std::string group_alone =
      s->workload_partition_alone.empty() ? "-" : text_format("%.1f", median(s->workload_partition_alone));
  std::fprintf(out, "  %8s %9.1f %9.1f %15s %7s %9.1f %9s %9.1f %15s %7s %7.3f%s\n", partition_text(k, *s).c_str(),
               median(s->transfer_alone_gbps), median(s->transfer_together_gbps), spread(s->transfer_together_gbps).c_str(),
               percent(slowdown_pct(s->transfer_alone_gbps, s->transfer_together_gbps)).c_str(), median(s->workload_alone),
               group_alone.c_str(), median(s->workload_together), spread(s->workload_together).c_str(),
               percent(slowdown_pct(s->workload_alone, s->workload_together)).c_str(), least_overlap(*s).value_or(0.0),
               low_overlap(*s) ? "  LOW OVERLAP" : "");
}

// The unit of the workload's figure, as the cases that ran say it.
std::string unit_of(const std::vector<const CaseResult*>& cases) {
  std::string unit = "figure";
  for (const CaseResult* r : cases)
    if (const InterferenceSamples* s = measured(*r)) unit = s->workload_unit;
  return unit;
}

// The interference cases by trade curve, curves in the order the run met them.
std::vector<std::pair<std::string, std::vector<const CaseResult*>>> curves_of(const std::vector<CaseResult>& cases) {
  std::vector<std::pair<std::string, std::vector<const CaseResult*>>> curves;
  for (const CaseResult& r : cases) {
    if (!is_interference(r.spec.method)) continue;
    const std::string key = curve_of(r.spec);
    auto it = std::find_if(curves.begin(), curves.end(), [&](const auto& c) { return c.first == key; });
    if (it == curves.end()) it = curves.insert(curves.end(), {key, {}});
    it->second.push_back(&r);
  }
  return curves;
}

void print_header(std::FILE* out, const std::string& title, const std::string& unit) {
  std::fprintf(out, "\n%s   [link GB/s, 1 GB = 1e9 B; workload %s; medians, min..max over samples]\n", title.c_str(), unit.c_str());
  std::fprintf(out, "  %8s %9s %9s %15s %7s %9s %9s %9s %15s %7s %7s\n", "K SMs", "link", "link", "together", "link",
               "wl alone", "wl alone", "wl", "together", "wl", "overlap");
  std::fprintf(out, "  %8s %9s %9s %15s %7s %9s %9s %9s %15s %7s %7s\n", "", "alone", "together", "min..max", "slower",
               "whole GPU", "in group", "together", "min..max", "slower", "least");
}

}  // namespace

void print_interference_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases) {
  if (cases.empty()) return;
  std::vector<const CaseResult*> all;
  for (const CaseResult& r : cases) all.push_back(&r);
  print_header(out, title, unit_of(all));
  for (const CaseResult* r : all) print_row(out, *r);
  std::fflush(out);
}

std::vector<TradeFinding> trade_findings(const std::vector<CaseResult>& cases) {
  std::vector<TradeFinding> findings;
  for (const auto& [key, all] : curves_of(cases)) {
    std::vector<const CaseResult*> members;
    std::copy_if(all.begin(), all.end(), std::back_inserter(members), [](const CaseResult* r) { return measured(*r) != nullptr; });
    if (members.empty()) continue;
    double best_link = 0;
    for (const CaseResult* r : members) best_link = std::max(best_link, median(measured(*r)->transfer_alone_gbps));
    const CaseResult* choice = nullptr;
    for (const CaseResult* r : members)
      if (median(measured(*r)->transfer_together_gbps) >= kLinkKeptFraction * best_link &&
          (!choice || median(measured(*r)->workload_together) > median(measured(*choice)->workload_together)))
        choice = r;
    const CaseResult& first = *members.front();
    const auto cost = [](const CaseResult& r) { return slowdown_pct(measured(r)->workload_alone, measured(r)->workload_together); };
    TradeFinding f{key, *first.spec.engine, *first.spec.workload, measured(first)->workload_unit, best_link, {}, {}};
    if (choice) {
      const InterferenceSamples& s = *measured(*choice);
      f.keeps_link = TradeFinding::KeepsLink{choice->spec.sm_partition.value_or(0), s.transfer_group_sms,
                                             median(s.transfer_together_gbps), median(s.workload_together), cost(*choice)};
    }
    if (!takes_sms(*first.spec.engine)) f.copy_engine_cost_pct = cost(first);  // one case: no partition
    findings.push_back(std::move(f));
  }
  return findings;
}

namespace {

void print_finding(std::FILE* out, const TradeFinding& f) {
  if (f.copy_engine_cost_pct) {
    std::fprintf(out, "  %s: the %s costs the workload %.1f%%\n", f.curve.c_str(), method_info(f.engine).title,
                 *f.copy_engine_cost_pct);
    return;
  }
  if (!f.keeps_link) {
    std::fprintf(out, "  %s: no K keeps %.0f%% of %.1f GB/s\n", f.curve.c_str(), 100 * kLinkKeptFraction,
                 f.best_link_alone_gbps);
    return;
  }
  const TradeFinding::KeepsLink& k = *f.keeps_link;
  const int requested = k.sm_partition;
  const int granted = k.transfer_group_sms.value_or(requested);
  const std::string which = requested == 0 ? "all (no partition)"
                            : granted == requested ? std::to_string(requested)
                                                   : std::to_string(requested) + " (granted " + std::to_string(granted) + " SMs)";
  const std::string slowdown = k.workload_slowdown_pct ? text_format("%.1f", *k.workload_slowdown_pct) : "?";
  std::fprintf(out, "  %s: K = %s keeps %.1f of %.1f GB/s with the most workload: %.1f %s (%s%% slower than alone)\n",
               f.curve.c_str(), which.c_str(), k.link_gbps, f.best_link_alone_gbps, k.workload_figure,
               f.workload_unit.c_str(), slowdown.c_str());
}

}  // namespace

void print_trade_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  auto curves = curves_of(cases);
  if (curves.empty()) return;
  std::fprintf(out, "\nTrade table: the transfer's SM group (K, requested->granted) against link and workload figures\n");
  for (auto& [key, members] : curves) {
    std::stable_sort(members.begin(), members.end(), [](const CaseResult* a, const CaseResult* b) {
      return a->spec.sm_partition.value_or(0) < b->spec.sm_partition.value_or(0);
    });
    print_header(out, key, unit_of(members));
    for (const CaseResult* r : members) print_row(out, *r);
  }
  std::fprintf(out, "\nFindings (keeps the link: >= %.0f%% of the curve's best transfer-alone GB/s beside the workload):\n",
               100 * kLinkKeptFraction);
  for (const TradeFinding& f : trade_findings(cases)) print_finding(out, f);
  std::fflush(out);
}

}  // namespace p2pbench
