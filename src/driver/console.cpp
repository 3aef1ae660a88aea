#include "driver/console.hpp"

#include <unistd.h>

#include "config/axis.hpp"
#include "driver/trade_table.hpp"  // issue 13

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

std::string route_of(const json& r) {
  return r["src_rank"].is_null() ? "both" : std::to_string(r["src_rank"].get<int>()) + "->" + std::to_string(r["dst_rank"].get<int>());
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
  if (rows.front()["method"].get<std::string>().rfind("latency_", 0) == 0) return print_latency_table(out, title, rows);
  if (rows.front()["method"] == "interference") return print_interference_table(out, title, rows);  // issue 13
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
      const json& d = r["directions"];
      std::snprintf(extra, sizeof extra, "  %7.3f  %.1f + %.1f", r["overlap"].get<double>(),
                    d[0]["bandwidth_gbps"]["median"].get<double>(), d[1]["bandwidth_gbps"]["median"].get<double>());
    }
    std::fprintf(out, "%12s %8s %7llu %10.1f %21s %10.2f %6s%s  %s\n", format_size(r["bytes"]).c_str(), route.c_str(),
                 static_cast<unsigned long long>(r["iterations"].get<uint64_t>()), bw["median"].get<double>(), range,
                 r["time_us"]["median"].get<double>(), sms.c_str(), extra, status.c_str());
  }
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
