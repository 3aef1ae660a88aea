#include "driver/console.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/text_format.hpp"
#include "results/result_writer.hpp"
#include "stats/statistics.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

std::string group_key(const CaseSpec& c) {
  CaseSpec shape = c;
  shape.bytes = 0;
  shape.flows.clear();
  shape.round.reset();
  std::string name = shape.name();
  const size_t pos = name.find("/bytes:0");
  if (pos != std::string::npos) name.erase(pos, 8);
  return name;
}

namespace {

// "0->1" for one flow, "0<->2" for a pair both ways, "4 flows" for more.
std::string route_of(const CaseSpec& c) {
  const auto& flows = c.flows;
  if (flows.empty()) return "-";
  const Flow& a = flows[0];
  if (flows.size() == 1) return std::to_string(a.src_rank) + "->" + std::to_string(a.dst_rank);
  const Flow& b = flows[1];
  if (flows.size() == 2 && a.src_rank == b.dst_rank && a.dst_rank == b.src_rank)
    return std::to_string(a.src_rank) + "<->" + std::to_string(a.dst_rank);
  return std::to_string(flows.size()) + " flows";
}

std::string status_of(const CaseOutcome& o) { return status_name(o.status) + (o.error.empty() ? "" : ": " + o.error); }

// The samples' median, or nothing where there are none.
std::optional<double> median_of(const std::vector<double>& samples) {
  return samples.empty() ? std::nullopt : std::optional<double>(quantile(samples, 0.5));
}

// A latency case's one-way times, where it measured.
const std::vector<double>* latency_samples(const CaseResult& r) {
  return is_latency(r.spec.method) ? figure_samples(r) : nullptr;
}

// The extra columns of latency_ce (issue interval) and latency_read (cycles, at the peak clock).
std::string latency_extra(const CaseOutcome& o, bool copies, bool reads) {
  if (copies && !o.issue_interval_us.empty()) return text_format("  %18.3f", *median_of(o.issue_interval_us));
  if (reads && !o.cycles.empty())
    return text_format("  %6.0f  %16.3f", *median_of(o.cycles), *median_of(o.latency_at_peak_clock_us));
  return "";
}

// Latency cases: microseconds per event (one-way trip, dependent load or copy), not GB/s.
void print_latency_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases) {
  const bool copies = method_info(cases.front().spec.method).cost == SampleCost::kSmallCopies;
  const bool reads = chases_pointers(cases.front().spec.method);
  std::fprintf(out, "\n%s   [microseconds; median, min..max, p95 over samples]\n", title.c_str());
  std::fprintf(out, "%12s %8s %7s %10s %21s %9s%s  %s\n", "size", "src->dst", "events", "us", "min..max", "p95",
               copies ? "  issue interval us" : reads ? "  cycles  us at peak clock" : "", "status");
  for (const CaseResult& r : cases) {
    const std::string size = format_size(r.spec.bytes), route = route_of(r.spec), status = status_of(r.outcome);
    const std::vector<double>* samples = latency_samples(r);
    if (!samples) {
      std::fprintf(out, "%12s %8s %7s %10s %21s %9s%s  %s\n", size.c_str(), route.c_str(), "-", "-", "-", "-",
                   copies ? "  -" : "", status.c_str());
      continue;
    }
    const Summary l = summarize(*samples);
    std::fprintf(out, "%12s %8s %7llu %10.3f %21s %9.3f%s  %s\n", size.c_str(), route.c_str(),
                 static_cast<unsigned long long>(r.outcome.iterations), l.median,
                 text_format("%.3f..%.3f", l.min, l.max).c_str(), quantile(*samples, 0.95),
                 latency_extra(r.outcome, copies, reads).c_str(), status.c_str());
  }
  std::fflush(out);
}

// A bandwidth case's aggregate GB/s, where it measured.
std::optional<Summary> bandwidth_of(const CaseResult& r) {
  const std::vector<double>* samples = is_latency(r.spec.method) ? nullptr : figure_samples(r);
  return samples ? std::optional<Summary>(summarize(*samples)) : std::nullopt;
}

// A bidir case: the overlap of its two windows and each direction's own median.
std::string bidir_extra(const CaseOutcome& o) {
  const auto overlap = median_of(o.overlap);
  std::string text = overlap ? text_format("  %7.3f", *overlap) : "        -";
  if (o.flows.size() == 2 && !o.flows[0].gbps.empty() && !o.flows[1].gbps.empty())
    return text + text_format("  %.1f + %.1f", *median_of(o.flows[0].gbps), *median_of(o.flows[1].gbps));
  return text + "  -";
}

// Put-with-signal methods (chunk_bytes): each chunk is one signal, so the rate of signals is the
// figure over the chunk size (millions per second).
std::string signal_rate_text(const CaseSpec& c, double gbps) {
  if (!c.chunk_bytes || *c.chunk_bytes == 0) return "";
  return text_format("; %.2f M signals/s", gbps * 1e3 / double(*c.chunk_bytes));
}

// A method's figures in units of their own beside the GB/s (gemm: TFLOP/s).
std::string own_figures_text(const CaseResult& r) {
  std::string text;
  for (const OwnFigure& f : own_figures(r)) text += text_format("; %.1f %s", f.median, f.unit.c_str());
  return text;
}

}  // namespace

std::string headline_figure(const CaseResult& r) {
  const std::vector<double>* samples = figure_samples(r);
  if (!samples) return "";
  if (is_collective(r.spec.method)) {
    const CollectiveFigures f = collective_figures(r.spec, r.outcome);
    if (!f.busbw_gbps.empty())
      return text_format("%.2f us, busbw %.1f GB/s", *median_of(r.outcome.time_us), *median_of(f.busbw_gbps));
  }
  return text_format(is_latency(r.spec.method) ? "%.3f us" : "%.1f GB/s", *median_of(*samples)) + own_figures_text(r);
}

void print_group_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases) {
  if (cases.empty()) return;
  if (is_latency(cases.front().spec.method)) return print_latency_table(out, title, cases);
  const bool bidir = cases.front().spec.mode == Mode::kBidir;
  std::fprintf(out, "\n%s   [GB/s, 1 GB = 1e9 B; median, min..max over samples]\n", title.c_str());
  std::fprintf(out, "%12s %8s %7s %10s %21s %10s %6s%s  %s\n", "size", "src->dst", "iters", "GB/s", "min..max",
               "us/xfer", "SMs", bidir ? "  overlap  per-direction GB/s" : "", "status");
  for (const CaseResult& r : cases) {
    const std::string size = format_size(r.spec.bytes), route = route_of(r.spec), status = status_of(r.outcome);
    const std::string sms = r.outcome.sms_used ? std::to_string(*r.outcome.sms_used) : "-";
    const auto bw = bandwidth_of(r);
    if (!bw) {
      std::fprintf(out, "%12s %8s %7s %10s %21s %10s %6s%s  %s\n", size.c_str(), route.c_str(), "-", "-", "-", "-",
                   sms.c_str(), bidir ? "        -  -" : "", status.c_str());
      continue;
    }
    std::fprintf(out, "%12s %8s %7llu %10.1f %21s %10.2f %6s%s  %s%s\n", size.c_str(), route.c_str(),
                 static_cast<unsigned long long>(r.outcome.iterations), bw->median,
                 text_format("%.1f..%.1f", bw->min, bw->max).c_str(), summarize(r.outcome.time_us).median, sms.c_str(),
                 bidir ? bidir_extra(r.outcome).c_str() : "", status.c_str(),
                 (signal_rate_text(r.spec, bw->median) + own_figures_text(r)).c_str());
  }
  std::fflush(out);
}

namespace {

constexpr int kCellWidth = 9;         // "same GPU" and "1234.5" fit
constexpr size_t kPairsListed = 8;    // skipped pairs named per reason
constexpr size_t kFindingsListed = 10;  // agreement pairs and suspects listed before "and k more"

std::string pair_name(int src, int dst) { return std::to_string(src) + "->" + std::to_string(dst); }

std::string cell_text(const PairMatrix& m, int src, int dst) {
  if (src == dst) return "-";
  const MatrixCell& c = m.at(src, dst);
  switch (c.state) {
    case CellState::kMeasured: return text_format("%.1f", c.median_gbps);
    case CellState::kSameDevice: return "same GPU";
    case CellState::kSkipped: return "skip";
    case CellState::kFailed: return "FAIL";
    case CellState::kMissing: return ".";
  }
  return ".";
}

// Explains only the marks the matrix shows (the diagonal is always "missing": not counted).
std::string legend_of(const PairMatrix& m) {
  std::string legend;
  auto add = [&legend](bool present, const char* text) {
    if (present) legend += (legend.empty() ? "" : "; ") + std::string(text);
  };
  add(m.count(CellState::kSameDevice) > 0, "same GPU: both ranks on one GPU, no P2P figure");
  add(m.count(CellState::kSkipped) > 0, "skip: skipped");
  add(m.count(CellState::kFailed) > 0, "FAIL: failed");
  add(m.count(CellState::kMissing) > size_t(m.ranks), ".: not measured");
  return legend;
}

// The skipped and failed cells, grouped by their reason.
void print_cell_reasons(std::FILE* out, const PairMatrix& m) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> pairs_by_reason;
  for (int src = 0; src < m.ranks; ++src)
    for (int dst = 0; dst < m.ranks; ++dst) {
      const MatrixCell& c = m.at(src, dst);
      if (c.state == CellState::kSkipped || c.state == CellState::kFailed)
        pairs_by_reason[{c.state == CellState::kSkipped ? "skip" : "FAIL", c.reason}].push_back(pair_name(src, dst));
    }
  for (const auto& [what, pairs] : pairs_by_reason) {
    std::string list;
    for (size_t i = 0; i < std::min(pairs.size(), kPairsListed); ++i) list += (i ? ", " : "") + pairs[i];
    if (pairs.size() > kPairsListed) list += text_format(" and %zu more", pairs.size() - kPairsListed);
    std::fprintf(out, "  %s %s: %s\n", what.first.c_str(), list.c_str(), what.second.empty() ? "(no reason given)" : what.second.c_str());
  }
}

bool is_pattern_case(const CaseSpec& c) {
  if (c.pattern == Pattern::kMatrix || c.pattern == Pattern::kSampled) return false;
  return !is_latency(c.method) && method_info(c.method).kind != MethodKind::kInterference && !is_collective(c.method);
}

// Collectives: time per operation and nccl-tests' algorithm and bus bandwidth.
void print_collective_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases) {
  if (cases.empty()) return;
  std::fprintf(out,
               "\n%s   [us per operation = union of the ranks' windows / operations; algbw = bytes / time, busbw = "
               "algbw x bus factor (nccl-tests), GB/s with 1 GB = 1e9 B; medians over samples]\n",
               title.c_str());
  std::fprintf(out, "%12s %5s %7s %10s %21s %10s %10s %6s  %s\n", "bytes", "ranks", "iters", "us", "min..max", "algbw",
               "busbw", "SMs", "status");
  for (const CaseResult& r : cases) {
    const CollectiveFigures f = collective_figures(r.spec, r.outcome);
    const std::string bytes = format_size(f.size ? f.size->bytes : r.spec.bytes), status = status_of(r.outcome);
    const std::string sms = r.outcome.sms_used ? std::to_string(*r.outcome.sms_used) : "-";
    if (f.busbw_gbps.empty()) {
      std::fprintf(out, "%12s %5d %7s %10s %21s %10s %10s %6s  %s\n", bytes.c_str(), f.ranks, "-", "-", "-", "-", "-",
                   sms.c_str(), status.c_str());
      continue;
    }
    const Summary us = summarize(r.outcome.time_us);
    std::fprintf(out, "%12s %5d %7llu %10.2f %21s %10.1f %10.1f %6s  %s\n", bytes.c_str(), f.ranks,
                 static_cast<unsigned long long>(r.outcome.iterations), us.median,
                 text_format("%.2f..%.2f", us.min, us.max).c_str(), *median_of(f.algbw_gbps), *median_of(f.busbw_gbps),
                 sms.c_str(), status.c_str());
  }
  std::fflush(out);
}

// "one_to_all root 0", "ring shift 2", "flows 0->1,2->3": what tells two cases of a pattern apart.
std::string pattern_label(const CaseSpec& c) {
  const std::string pattern = to_string(c.pattern);
  const int n = int(c.flows.size());
  if (n == 0) return pattern;
  const int src = c.flows[0].src_rank, dst = c.flows[0].dst_rank;
  if (c.pattern == Pattern::kOneToAll) return pattern + " root " + std::to_string(src);
  if (c.pattern == Pattern::kAllToOne) return pattern + " root " + std::to_string(dst);
  if (c.pattern == Pattern::kRing) return pattern + " shift " + std::to_string(((dst - src) % n + n) % n);
  if (c.pattern == Pattern::kFlows && n <= 3) {
    std::string list;
    for (const Flow& f : c.flows) list += (list.empty() ? "" : ",") + pair_name(f.src_rank, f.dst_rank);
    return pattern + " " + list;
  }
  return pattern;
}

// min / median / max of the flows' own medians; a flow within one GPU is no P2P figure and
// stays out (the status says so).
std::string per_flow_text(const CaseOutcome& o, const GroupLayout& layout) {
  std::vector<double> medians;
  for (const FlowSamples& f : o.flows)
    if (!is_same_device_flow(f.flow, layout) && !f.gbps.empty()) medians.push_back(quantile(f.gbps, 0.5));
  if (medians.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  return text_format("%.1f / %.1f / %.1f", *lo, quantile(medians, 0.5), *hi);
}

std::string pattern_status(const CaseResult& r, const GroupLayout& layout) {
  const auto local = std::count_if(r.spec.flows.begin(), r.spec.flows.end(),
                                   [&](const Flow& f) { return is_same_device_flow(f, layout); });
  return status_of(r.outcome) +
         (local ? text_format("; %td same-GPU flow%s, not in per flow", local, local > 1 ? "s" : "") : "");
}

// One pattern case's line.
void print_pattern_line(std::FILE* out, const CaseResult& r, const GroupFacts& facts) {
  const auto bw = bandwidth_of(r);
  const auto pct = bw ? pct_of_peak(bw->median, aggregate_peak(r.spec, facts)) : std::nullopt;
  const auto overlap = median_of(r.outcome.overlap);
  std::fprintf(out, "%12s %-20s %5zu %10s %19s %8s %23s %7s  %s\n", format_size(r.spec.bytes).c_str(),
               pattern_label(r.spec).c_str(), r.spec.flows.size(), bw ? text_format("%.1f", bw->median).c_str() : "-",
               bw ? text_format("%.1f..%.1f", bw->min, bw->max).c_str() : "-",
               pct ? text_format("%.1f%%", *pct).c_str() : "-", per_flow_text(r.outcome, facts.layout).c_str(),
               overlap ? text_format("%.3f", *overlap).c_str() : "-",
               pattern_status(r, facts.layout).c_str());
}

void print_agreement(std::FILE* out, const RoundsAgreement& a) {
  std::vector<PairAgreement> pairs = a.pairs;
  std::stable_sort(pairs.begin(), pairs.end(), [](const PairAgreement& x, const PairAgreement& y) {
    return std::fabs(x.difference_pct) > std::fabs(y.difference_pct);
  });
  MatrixKey measurement = a.key;
  measurement.schedule.clear();
  std::fprintf(out, "\nRounds vs alone, %s: %zu pairs, worst %+.1f%% (%s)   [GB/s, 1 GB = 1e9 B; difference = (rounds - alone) / alone]\n",
               measurement.title().c_str(), pairs.size(), pairs.front().difference_pct,
               pair_name(pairs.front().src_rank, pairs.front().dst_rank).c_str());
  std::fprintf(out, "%8s %10s %10s %11s  %s\n", "pair", "rounds", "alone", "difference", "alone in");
  for (size_t i = 0; i < std::min(pairs.size(), kFindingsListed); ++i) {
    const PairAgreement& p = pairs[i];
    std::fprintf(out, "%8s %10.1f %10.1f %+10.1f%%  %s\n", pair_name(p.src_rank, p.dst_rank).c_str(), p.rounds_gbps, p.alone_gbps,
                 p.difference_pct, p.alone_from.c_str());
  }
  if (pairs.size() > kFindingsListed)
    std::fprintf(out, "%8s and %zu more pairs, all within %.1f%%\n", "", pairs.size() - kFindingsListed,
                 std::fabs(pairs[kFindingsListed].difference_pct));
}

void print_suspects(std::FILE* out, const MatrixReport& report) {
  const auto& suspects = report.suspects;
  if (suspects.empty()) {
    if (report.links.ranks >= kMatrixTablesFromRanks)
      std::fprintf(out, "\nSuspect pairs: no suspect pairs (none more than %.0f%% below the median of its link class)\n",
                   report.margin_pct);
    return;
  }
  std::fprintf(out, "\nSuspect pairs (more than %.0f%% below the median of the other pairs of the same link class in the same "
                   "matrix; worst first):\n",
               report.margin_pct);
  for (size_t i = 0; i < std::min(suspects.size(), kFindingsListed); ++i) {
    const SuspectPair& s = suspects[i];
    std::fprintf(out, "  %s: %s %.1f GB/s, %.1f%% below the median %.1f GB/s of the other %zu %s pairs\n",
                 s.key.title().c_str(), pair_name(s.src_rank, s.dst_rank).c_str(), s.gbps, s.shortfall_pct, s.reference_gbps,
                 s.comparable_cells - 1, s.link_class.c_str());
  }
  if (suspects.size() > kFindingsListed)
    std::fprintf(out, "  and %zu more (suspect_pairs in the results file)\n", suspects.size() - kFindingsListed);
}

}  // namespace

void print_pair_matrix(std::FILE* out, const PairMatrix& m) {
  std::fprintf(out, "\n%s   [GB/s, 1 GB = 1e9 B; median over samples; row = source rank, column = destination rank]\n",
               m.key.title().c_str());
  std::string line = text_format("%8s", "src\\dst");
  for (int dst = 0; dst < m.ranks; ++dst) line += text_format(" %*d", kCellWidth, dst);
  std::fprintf(out, "%s\n", line.c_str());
  for (int src = 0; src < m.ranks; ++src) {
    line = text_format("%8d", src);
    for (int dst = 0; dst < m.ranks; ++dst) line += text_format(" %*s", kCellWidth, cell_text(m, src, dst).c_str());
    std::fprintf(out, "%s\n", line.c_str());
  }
  const std::string legend = legend_of(m);
  if (!legend.empty()) std::fprintf(out, "  %s\n", legend.c_str());
  print_cell_reasons(out, m);
  std::fflush(out);
}

void print_pattern_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases,
                         const GroupFacts& facts) {
  if (cases.empty()) return;
  std::fprintf(out,
               "\n%s   [GB/s, 1 GB = 1e9 B; aggregate = all bytes / union of the flows' windows, median and min..max over "
               "samples; %% of the sum of the flows' peaks; per flow: min / median / max of the flows' medians]\n",
               title.c_str());
  std::fprintf(out, "%12s %-20s %5s %10s %19s %8s %23s %7s  %s\n", "size", "pattern", "flows", "aggregate", "min..max", "% peaks",
               "per flow", "overlap", "status");
  for (const CaseResult& r : cases) print_pattern_line(out, r, facts);
  std::fflush(out);
}

void print_group_tables(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases,
                        const GroupFacts& facts, const PairLinks& links) {
  if (!cases.empty() && is_collective(cases.front().spec.method)) return print_collective_table(out, title, cases);
  std::vector<CaseResult> matrix_cases, pattern_cases, other_cases;
  for (const CaseResult& r : cases) {
    if (is_pattern_case(r.spec))
      pattern_cases.push_back(r);
    else if (links.ranks >= kMatrixTablesFromRanks && is_matrix_case(r.spec) && matrix_key_of(r.spec).schedule != "alone_check")
      matrix_cases.push_back(r);
    else
      other_cases.push_back(r);
  }
  print_group_table(out, title, other_cases);
  for (const PairMatrix& m : assemble_matrices(matrix_cases, links)) print_pair_matrix(out, m);
  print_pattern_table(out, title, pattern_cases, facts);
}

void print_matrix_findings(std::FILE* out, const MatrixReport& report) {
  for (const RoundsAgreement& a : report.agreement) print_agreement(out, a);
  print_suspects(out, report);
  std::fflush(out);
}

ProgressLine::ProgressLine(size_t total, bool forced)
    : total_(total), enabled_(forced || isatty(STDERR_FILENO)), terminal_(isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(size_t done, const std::string& current, const std::string& last_figure) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double left = done > 0 ? elapsed / double(done) * double(total_ - done) : 0.0;
  std::fprintf(stderr, "%s[%4zu/%zu] %.0f s elapsed, ~%.0f s left | %s %s%s", terminal_ ? "\r\033[K" : "", done, total_,
               elapsed, left, current.c_str(), last_figure.c_str(), terminal_ ? "" : "\n");
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (enabled_ && terminal_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace p2pbench
