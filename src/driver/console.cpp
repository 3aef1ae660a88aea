#include "driver/console.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/text_format.hpp"
#include "results/result_writer.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

using json = nlohmann::json;

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

// "0->1" for one flow, "0<->2" for a pair both ways, "4 flows" for more; "both" for a v1
// bidir row (no flows).
std::string route_of(const json& r) {
  if (!r["src_rank"].is_null()) return std::to_string(r["src_rank"].get<int>()) + "->" + std::to_string(r["dst_rank"].get<int>());
  const json flows = r.value("flows", json());
  if (!flows.is_array() || flows.empty()) return "both";
  const json& a = flows[0];
  if (flows.size() == 1) return std::to_string(a["src_rank"].get<int>()) + "->" + std::to_string(a["dst_rank"].get<int>());
  const json& b = flows[1];
  if (flows.size() == 2 && a["src_rank"] == b["dst_rank"] && a["dst_rank"] == b["src_rank"])
    return std::to_string(a["src_rank"].get<int>()) + "<->" + std::to_string(a["dst_rank"].get<int>());
  return std::to_string(flows.size()) + " flows";
}

// A bidir row's two directions: v1's `directions`, else v2's `flows`.
const json& directions_of(const json& r) {
  return r.contains("directions") && r["directions"].is_array() ? r["directions"] : r["flows"];
}

std::string status_of(const json& r) {
  return r["status"].get<std::string>() + (r.contains("error") ? ": " + r["error"].get<std::string>() : "");
}

// Latency rows: microseconds per event (one-way trip, dependent load or copy), not GB/s.
void print_latency_table(std::FILE* out, const std::string& title, const std::vector<json>& rows) {
  const bool copies = rows.front()["method"] == "latency_ce";
  const bool reads = rows.front()["method"] == "latency_read";
  std::fprintf(out, "\n%s   [microseconds; median, min..max, p95 over samples]\n", title.c_str());
  std::fprintf(out, "%12s %8s %7s %10s %21s %9s%s  %s\n", "size", "src->dst", "events", "us", "min..max", "p95",
               copies ? "  issue interval us" : reads ? "  cycles  us at peak clock" : "", "status");
  for (const json& r : rows) {
    if (!r.contains("latency_us") || r["latency_us"].is_null()) {
      std::fprintf(out, "%12s %8s %7s %10s %21s %9s%s  %s\n", format_size(r["bytes"]).c_str(), route_of(r).c_str(), "-", "-",
                   "-", "-", copies ? "  -" : "", status_of(r).c_str());
      continue;
    }
    const json& l = r["latency_us"];
    char range[64], extra[48] = "";
    std::snprintf(range, sizeof range, "%.3f..%.3f", l["min"].get<double>(), l["max"].get<double>());
    if (copies && r.contains("issue_interval_us"))
      std::snprintf(extra, sizeof extra, "  %18.3f", r["issue_interval_us"]["median"].get<double>());
    if (reads && r.contains("cycles"))
      std::snprintf(extra, sizeof extra, "  %6.0f  %16.3f", r["cycles"]["median"].get<double>(),
                    r["latency_at_peak_clock_us"]["median"].get<double>());
    std::fprintf(out, "%12s %8s %7llu %10.3f %21s %9.3f%s  %s\n", format_size(r["bytes"]).c_str(), route_of(r).c_str(),
                 static_cast<unsigned long long>(r["iterations"].get<uint64_t>()), l["median"].get<double>(), range,
                 l["p95"].get<double>(), extra, status_of(r).c_str());
  }
  std::fflush(out);
}

}  // namespace

std::string headline_figure(const json& row) {
  char figure[64] = "";
  if (row.contains("latency_us") && !row["latency_us"].is_null())
    std::snprintf(figure, sizeof figure, "%.3f us", row["latency_us"]["median"].get<double>());
  else if (!row["bandwidth_gbps"].is_null())
    std::snprintf(figure, sizeof figure, "%.1f GB/s", row["bandwidth_gbps"]["median"].get<double>());
  return figure;
}

void print_group_table(std::FILE* out, const std::string& title, const std::vector<json>& rows) {
  if (rows.empty()) return;
  const auto kind = method_kind_of(rows.front());
  if (kind == MethodKind::kLatency) return print_latency_table(out, title, rows);
  const bool bidir = rows.front()["mode"] == "bidir";
  std::fprintf(out, "\n%s   [GB/s, 1 GB = 1e9 B; median, min..max over samples]\n", title.c_str());
  std::fprintf(out, "%12s %8s %7s %10s %21s %10s %6s%s  %s\n", "size", "src->dst", "iters", "GB/s", "min..max",
               "us/xfer", "SMs", bidir ? "  overlap  per-direction GB/s" : "", "status");
  for (const json& r : rows) {
    const std::string route = route_of(r);
    const std::string sms = r["sms_used"].is_null() ? "-" : std::to_string(r["sms_used"].get<int>());
    const std::string status = status_of(r);
    if (r["bandwidth_gbps"].is_null()) {
      std::fprintf(out, "%12s %8s %7s %10s %21s %10s %6s%s  %s\n", format_size(r["bytes"]).c_str(), route.c_str(), "-", "-",
                   "-", "-", sms.c_str(), bidir ? "        -  -" : "", status.c_str());
      continue;
    }
    const json& bw = r["bandwidth_gbps"];
    char range[64], extra[96] = "";
    std::snprintf(range, sizeof range, "%.1f..%.1f", bw["min"].get<double>(), bw["max"].get<double>());
    if (bidir) {
      const json& d = directions_of(r);
      std::snprintf(extra, sizeof extra, "  %7.3f  %.1f + %.1f", r["overlap"].get<double>(),
                    d[0]["bandwidth_gbps"]["median"].get<double>(), d[1]["bandwidth_gbps"]["median"].get<double>());
    }
    std::fprintf(out, "%12s %8s %7llu %10.1f %21s %10.2f %6s%s  %s\n", format_size(r["bytes"]).c_str(), route.c_str(),
                 static_cast<unsigned long long>(r["iterations"].get<uint64_t>()), bw["median"].get<double>(), range,
                 r["time_us"]["median"].get<double>(), sms.c_str(), extra, status.c_str());
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

bool is_pattern_row(const json& r) {
  const json& p = r.contains("pattern") ? r["pattern"] : json();
  return p.is_string() && p != "matrix" && p != "sampled" && !r.contains("latency_us") &&
         method_kind_of(r) != MethodKind::kInterference;
}

// "one_to_all root 0", "ring shift 2", "flows 0->1,2->3": what tells two rows of a pattern apart.
std::string pattern_label(const json& r) {
  const std::string pattern = r["pattern"];
  const json flows = r.value("flows", json::array());
  const int n = int(flows.size());
  if (n == 0) return pattern;
  const int src = flows[0]["src_rank"], dst = flows[0]["dst_rank"];
  if (pattern == "one_to_all") return pattern + " root " + std::to_string(src);
  if (pattern == "all_to_one") return pattern + " root " + std::to_string(dst);
  if (pattern == "ring") return pattern + " shift " + std::to_string(((dst - src) % n + n) % n);
  if (pattern == "flows" && n <= 3) {
    std::string list;
    for (const json& f : flows) list += (list.empty() ? "" : ",") + pair_name(f["src_rank"], f["dst_rank"]);
    return pattern + " " + list;
  }
  return pattern;
}

bool is_same_device_flow(const json& f) { return f.contains("same_device") && f["same_device"] == true; }

// min / median / max of the flows' own medians; a flow within one GPU is no P2P figure and
// stays out (the status says so).
std::string per_flow_text(const json& r) {
  std::vector<double> medians;
  for (const json& f : r.value("flows", json::array()))
    if (!is_same_device_flow(f) && f.contains("bandwidth_gbps") && f["bandwidth_gbps"].is_object())
      medians.push_back(f["bandwidth_gbps"]["median"].get<double>());
  if (medians.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  return text_format("%.1f / %.1f / %.1f", *lo, quantile(medians, 0.5), *hi);
}

// The number at `key` of `o`, or "-" where there is none (null: one flow, no peak known).
std::string number_text(const json& o, const char* key, const char* format) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return "-";
  return text_format(format, o[key].get<double>());
}

std::string pattern_status(const json& r) {
  const json flows = r.value("flows", json::array());
  const auto local = std::count_if(flows.begin(), flows.end(), is_same_device_flow);
  return status_of(r) + (local ? text_format("; %td same-GPU flow%s, not in per flow", local, local > 1 ? "s" : "") : "");
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

void print_pattern_table(std::FILE* out, const std::string& title, const std::vector<json>& rows) {
  if (rows.empty()) return;
  std::fprintf(out,
               "\n%s   [GB/s, 1 GB = 1e9 B; aggregate = all bytes / union of the flows' windows, median and min..max over "
               "samples; %% of the sum of the flows' peaks; per flow: min / median / max of the flows' medians]\n",
               title.c_str());
  std::fprintf(out, "%12s %-20s %5s %10s %19s %8s %23s %7s  %s\n", "size", "pattern", "flows", "aggregate", "min..max", "% peaks",
               "per flow", "overlap", "status");
  for (const json& r : rows) {
    const json& agg = r.contains("aggregate") && r["aggregate"].is_object() ? r["aggregate"] : r;
    const json& bw = agg.contains("bandwidth_gbps") ? agg["bandwidth_gbps"] : json();
    const bool measured = bw.is_object();
    const std::string range = measured ? text_format("%.1f..%.1f", bw["min"].get<double>(), bw["max"].get<double>()) : "-";
    std::fprintf(out, "%12s %-20s %5zu %10s %19s %8s %23s %7s  %s\n", format_size(r["bytes"]).c_str(), pattern_label(r).c_str(),
                 r.value("flows", json::array()).size(), measured ? text_format("%.1f", bw["median"].get<double>()).c_str() : "-",
                 range.c_str(), number_text(agg, "pct_of_peak", "%.1f%%").c_str(), per_flow_text(r).c_str(),
                 number_text(r, "overlap", "%.3f").c_str(), pattern_status(r).c_str());
  }
  std::fflush(out);
}

void print_group_tables(std::FILE* out, const std::string& title, const std::vector<json>& rows, const PairLinks& links) {
  std::vector<json> matrix_rows, pattern_rows, other_rows;
  for (const json& r : rows) {
    if (is_pattern_row(r))
      pattern_rows.push_back(r);
    else if (links.ranks >= kMatrixTablesFromRanks && is_matrix_row(r) && matrix_key_of(r).schedule != "alone_check")
      matrix_rows.push_back(r);
    else
      other_rows.push_back(r);
  }
  print_group_table(out, title, other_rows);
  for (const PairMatrix& m : assemble_matrices(matrix_rows, links)) print_pair_matrix(out, m);
  print_pattern_table(out, title, pattern_rows);
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
