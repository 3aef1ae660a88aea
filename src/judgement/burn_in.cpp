#include "judgement/burn_in.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/text_format.hpp"
#include "judgement/verdicts.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

const char* const kErrorCounters[] = {"crc_data", "crc_flit", "ecc_data", "recovery", "replay"};
const char* const kLimitingViolations[] = {"power", "thermal"};

struct FlowWindow {
  int window = 0;
  double median_gbps = 0;
  double slowest_gbps = 0;  // the window's slowest transfer (its bandwidth minimum)
  std::string src_gpu, dst_gpu;
};

// One flow of the burn-in across its windows.
struct FlowSeries {
  std::string method, direction, mode;
  uint64_t bytes = 0;
  int src = 0, dst = 0;
  std::vector<FlowWindow> windows;

  std::string label() const {
    return method + " " + direction + (mode == "uni" ? "" : " " + mode) + " " + format_size(bytes) + " " +
           std::to_string(src) + "->" + std::to_string(dst);
  }
  double median() const {
    std::vector<double> medians;
    for (const FlowWindow& w : windows) medians.push_back(w.median_gbps);
    return medians.empty() ? 0.0 : quantile(medians, 0.5);
  }
  bool slow_in(const FlowWindow& w, double margin) const { return w.slowest_gbps < (1.0 - margin) * median(); }
  bool touches(const std::string& gpu) const {
    return !windows.empty() && (windows.front().src_gpu == gpu || windows.front().dst_gpu == gpu);
  }
};

double number_or(const json& j, const char* key, double fallback) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

// Every flow of the rows run in windows, in the order first seen.
std::vector<FlowSeries> flow_series(const std::vector<json>& rows) {
  std::vector<FlowSeries> series;
  std::map<std::tuple<std::string, std::string, std::string, uint64_t, int, int>, size_t> index;
  for (const json& row : rows) {
    if (!row.contains("window") || !row["window"].is_number_integer() || row.value("status", "") != "ok") continue;
    for (const json& f : row.value("flows", json::array())) {
      if (!f.contains("bandwidth_gbps") || !f["bandwidth_gbps"].is_object()) continue;
      const auto key = std::make_tuple(row["method"].get<std::string>(), row["direction"].get<std::string>(),
                                       row["mode"].get<std::string>(), f["bytes"].get<uint64_t>(),
                                       f["src_rank"].get<int>(), f["dst_rank"].get<int>());
      if (!index.count(key)) {
        index[key] = series.size();
        series.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), std::get<4>(key),
                          std::get<5>(key), {}});
      }
      const double median = f["bandwidth_gbps"]["median"].get<double>();
      const double slowest = number_or(f, "gbps_min_iteration", f["bandwidth_gbps"]["min"].get<double>());
      series[index[key]].windows.push_back({row["window"].get<int>(), median, slowest, f.value("src_gpu", ""),
                                            f.value("dst_gpu", "")});
    }
  }
  return series;
}

json item(const char* code, const char* severity, const std::string& message, json evidence) {
  return {{"code", code}, {"severity", severity}, {"window", nullptr},  {"src_rank", nullptr}, {"dst_rank", nullptr},
          {"gpu_uuid", nullptr}, {"link", nullptr},  {"counter", nullptr}, {"message", message}, {"evidence", evidence}};
}

void add_intermittent_flows(const std::vector<FlowSeries>& series, double margin, json& items) {
  for (const FlowSeries& s : series)
    for (const FlowWindow& w : s.windows) {
      if (!s.slow_in(w, margin)) continue;
      json i = item("intermittent_flow", "warn",
                    text_format("%s: window %d's slowest transfer moved %.2f GB/s, %.0f%% of the flow's median %.2f GB/s "
                                "(margin %.0f%%)",
                                s.label().c_str(), w.window, w.slowest_gbps, 100.0 * w.slowest_gbps / s.median(),
                                s.median(), 100.0 * margin),
                    {{"window_slowest_gbps", w.slowest_gbps}, {"window_median_gbps", w.median_gbps},
                     {"flow_median_gbps", s.median()}, {"margin", margin}, {"method", s.method},
                     {"direction", s.direction}, {"mode", s.mode}, {"bytes", s.bytes}});
      i["window"] = w.window;
      i["src_rank"] = s.src;
      i["dst_rank"] = s.dst;
      items.push_back(i);
    }
}

// The link whose counter rose most in a GPU's window: {link, counter, rise}.
std::tuple<int, std::string, double> worst_link(const json& by_link) {
  std::tuple<int, std::string, double> worst{-1, "", 0.0};
  for (const json& l : by_link)
    for (const char* c : kErrorCounters)
      if (number_or(l, c, 0) > std::get<2>(worst)) worst = {l.value("link", -1), c, number_or(l, c, 0)};
  return worst;
}

// Whether any flow touching `gpu` was slow in `window`.
bool slow_flow_on(const std::vector<FlowSeries>& series, const std::string& gpu, int window, double margin) {
  for (const FlowSeries& s : series)
    if (s.touches(gpu))
      for (const FlowWindow& w : s.windows)
        if (w.window == window && s.slow_in(w, margin)) return true;
  return false;
}

void add_error_items(const json& windows, const std::vector<FlowSeries>& series, double margin, json& items) {
  std::map<std::string, json> quiet;  // per GPU: the windows whose errors came with no slow flow
  for (const json& w : windows)
    for (const json& g : w.value("gpus", json::array())) {
      const auto [link, counter, rise] = worst_link(g.value("nvlink_errors_by_link_delta", json::array()));
      if (rise <= 0) continue;
      const int index = w["index"].get<int>();
      const std::string gpu = g.value("uuid", "");
      if (!slow_flow_on(series, gpu, index, margin)) {
        quiet[gpu].push_back(index);
        continue;
      }
      json i = item("error_burst", "warn",
                    text_format("%s link %d: %s rose by %.0f in window %d, where a flow on this GPU was slow",
                                gpu.c_str(), link, counter.c_str(), rise, index),
                    {{"nvlink_errors_delta", g.value("nvlink_errors_delta", json())},
                     {"nvlink_errors_by_link_delta", g["nvlink_errors_by_link_delta"]}});
      i["window"] = index;
      i["gpu_uuid"] = gpu;
      i["link"] = link;
      i["counter"] = counter;
      items.push_back(i);
    }
  for (const auto& [gpu, list] : quiet) {
    json i = item("errors_in_fast_windows", "info",
                  text_format("%s: NVLink error counters rose in %zu window(s) with no slow flow (first: window %d)",
                              gpu.c_str(), list.size(), list.front().get<int>()),
                  {{"windows", list}});
    i["gpu_uuid"] = gpu;
    items.push_back(i);
  }
}

void add_throttle_items(const json& windows, json& items) {
  for (const json& w : windows)
    for (const json& g : w.value("gpus", json::array())) {
      std::vector<std::string> reasons;
      for (const json& r : g.value("clock_event_reasons", json::array()))
        if (r.is_string() && !is_benign_clock_reason(r.get<std::string>())) reasons.push_back(r.get<std::string>());
      for (const char* v : kLimitingViolations)
        if (number_or(g.value("violation_ns_delta", json()), v, 0) > 0) reasons.push_back(std::string(v) + " violation time");
      if (reasons.empty()) continue;
      std::string list;
      for (const std::string& r : reasons) list += (list.empty() ? "" : ", ") + r;
      json i = item("throttled_window", "warn",
                    text_format("%s was held back in window %d: %s", g.value("uuid", "").c_str(), w["index"].get<int>(),
                                list.c_str()),
                    {{"reasons", reasons}, {"sm_clock_mhz", g.value("sm_clock_mhz", json())}});
      i["window"] = w["index"];
      i["gpu_uuid"] = g.value("uuid", "");
      items.push_back(i);
    }
}

}  // namespace

json window_gpus(const json& snapshot_end, const json& delta, const GroupLayout& layout) {
  json out = json::array();
  for (const json& g : snapshot_end.value("gpus", json::array())) {
    const std::string uuid = g.value("uuid", "");
    json d;
    for (const json& x : delta.value("gpus", json::array()))
      if (x.value("uuid", "") == uuid) d = x;
    json ranks = json::array();
    for (int r = 0; r < layout.size(); ++r)
      if (layout.gpu_of_rank[size_t(r)] == uuid) ranks.push_back(r);
    const json clocks = g.value("clocks_mhz", json::object());
    out.push_back({{"uuid", uuid},
                   {"pci_bus_id", g.value("pci_bus_id", json())},
                   {"ranks", ranks},
                   {"sm_clock_mhz", clocks.value("sm", json())},
                   {"mem_clock_mhz", clocks.value("mem", json())},
                   {"temperature_c", g.value("temperature_c", json())},
                   {"power_w", g.value("power_w", json())},
                   {"clock_event_reasons", g.value("clock_event_reasons", json::object()).value("names", json::array())},
                   {"violation_ns_delta", d.value("violation_ns", json())},
                   {"nvlink_errors_delta", d.value("nvlink_errors", json())},
                   {"nvlink_errors_by_link_delta", d.value("nvlink_errors_by_link", json::array())},
                   {"unavailable", g.contains("unavailable") ? g["unavailable"] : json()}});
  }
  return out;
}

json burn_in_verdicts(const json& windows, const std::vector<json>& rows, double margin) {
  const std::vector<FlowSeries> series = flow_series(rows);
  json items = json::array();
  add_intermittent_flows(series, margin, items);
  add_error_items(windows, series, margin, items);
  add_throttle_items(windows, items);
  bool warn = false;
  for (const json& i : items) warn = warn || i["severity"] == "warn";
  return {{"status", warn ? "warn" : "ok"}, {"items", items}};
}

std::vector<std::string> burn_in_summary_lines(const json& burn_in, const std::vector<json>& rows) {
  const json& windows = burn_in["windows"];
  const double margin = burn_in.value("margin", 0.1);
  std::vector<std::string> lines = {text_format(
      "burn-in: %zu of %d windows, %.1f s (windows of %.1f s, margin %.0f%%)", windows.size(),
      burn_in.value("windows_planned", 0), windows.empty() ? 0.0 : windows.back().value("end_s", 0.0),
      burn_in.value("window_s", 0.0), 100.0 * margin)};
  for (const FlowSeries& s : flow_series(rows)) {
    const auto worst = std::min_element(s.windows.begin(), s.windows.end(),
                                        [](const FlowWindow& a, const FlowWindow& b) { return a.slowest_gbps < b.slowest_gbps; });
    lines.push_back(text_format("  %s: median %.2f GB/s over %zu windows; worst window %d, slowest transfer %.2f GB/s "
                                "(%.0f%% of the median)",
                                s.label().c_str(), s.median(), s.windows.size(), worst->window, worst->slowest_gbps,
                                100.0 * worst->slowest_gbps / s.median()));
  }
  const json& items = burn_in.value("verdicts", json::object()).value("items", json::array());
  if (items.empty()) lines.push_back("  no burn-in findings: no slow window, no NVLink error rise, no throttling");
  for (const json& i : items)
    lines.push_back(std::string("  ") + (i["severity"] == "warn" ? "WARN " : "info ") + i["code"].get<std::string>() + ": " +
                    i["message"].get<std::string>());
  return lines;
}

std::string window_progress_line(const json& window, int windows_planned, double duration_s, const std::vector<json>& rows) {
  const int index = window["index"].get<int>();
  const double end_s = window["end_s"].get<double>();
  std::string figures;
  for (const FlowSeries& s : flow_series(rows))
    for (const FlowWindow& w : s.windows)
      if (w.window == index)
        figures += text_format("; %s %.2f GB/s (slowest transfer %.2f)", s.label().c_str(), w.median_gbps, w.slowest_gbps);
  double errors = 0;
  for (const json& g : window.value("gpus", json::array()))
    for (const char* c : kErrorCounters) errors += number_or(g.value("nvlink_errors_delta", json()), c, 0);
  return text_format("burn-in window %d/%d done at %.1f s (%.0f s left)%s; NVLink errors +%.0f", index + 1, windows_planned,
                     end_s, std::max(0.0, duration_s - end_s), figures.c_str(), errors);
}

}  // namespace p2pbench
