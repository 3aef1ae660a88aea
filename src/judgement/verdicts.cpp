// Health verdicts from the NVML snapshots in meta, with NVIDIA DCGM's own rules (DCGM 4.6.0,
// modules/health/DcgmHealthWatch.cpp unless said otherwise):
// - NVLink CRC (flit, data) errors, MonitorNVLink4Fields: a rise of >= 1 is a DCGM WARN; a rate
//   >= 100 per second (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR, per GPU, all links summed) is a FAIL
//   (DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD). The DCGM diagnostic fails the same rate
//   (nvvs pcie plugin, nvlink_crc_error_threshold = 100.0, per one-second sample).
//   Here: >= 100/s is a warning; a smaller rise is an info item, since NVIDIA's RM says CRC
//   errors only matter from 100/s on (common/DcgmGPUHardwareLimits.h). Our rate is the average
//   over the whole run, so it can only understate a burst.
// - NVLink ECC-data errors (DCGM_FI_DEV_NVLINK_ECC_ERROR_TOTAL = NVML field 160),
//   MonitorNVLink5Fields, new in DCGM 4.6.0 and applied to every GPU that reports the counter:
//   any rise is a FAIL (DCGM_FR_NVLINK_ERROR_CRITICAL, "should be 0"). Here: a warning.
// - NVLink replay and recovery errors: any rise is a FAIL (DCGM_FR_NVLINK_ERROR_CRITICAL).
// - A link down is a FAIL (DCGM_FR_NVLINK_DOWN).
// - Memory ECC: a volatile double-bit (uncorrected) error is a FAIL
//   (MonitorMemVolatileDbes); single-bit (corrected) ones are no health failure. Here: warning
//   and info.
// - Clocks: power or thermal violation time that rose is a WARN (MonitorPower, MonitorThermal,
//   DCGM_FR_CLOCKS_EVENT_POWER / _THERMAL). Here: any limiter other than low utilization, and
//   any clock event reason other than idle / applications clocks set in a snapshot.
#include "common/text_format.hpp"
#include "judgement/verdicts.hpp"

#include <algorithm>
#include <set>

#include "judgement/verdict_detail.hpp"

namespace p2pbench {

using nlohmann::json;
using namespace verdict_detail;

namespace {

// A counter's increase; null (unreadable) and anything not a non-negative integer count as 0.
unsigned long long count(const json* obj, const char* key) {
  const json* v = child(obj, key);
  if (v == nullptr || !v->is_number_integer()) return 0;
  return v->is_number_unsigned() ? v->get<unsigned long long>() : std::max<long long>(0, v->get<long long>());
}

// Seconds the counters' increase happened in: between the snapshots where they carry a time,
// else the sweep's duration (older files).
struct RunTime {
  std::optional<double> seconds;
  std::string source;
};

RunTime run_time(const json& meta) {
  const json* delta = child(&meta, "health_delta");
  if (const json* s = child(delta, "seconds"); s != nullptr && s->is_number() && s->get<double>() > 0)
    return {s->get<double>(), "between the health snapshots"};
  const json* sweep = child(child(&meta, "timer_calibration"), "sweep_seconds");
  if (sweep != nullptr && sweep->is_number() && sweep->get<double>() > 0)
    return {sweep->get<double>(), "sweep duration (the snapshots carry no time)"};
  return {std::nullopt, "unknown"};
}

// "0-17" or "3, 5-7" from sorted link numbers.
std::string link_ranges(const std::vector<int>& links) {
  std::string out;
  for (size_t i = 0; i < links.size();) {
    size_t j = i;
    while (j + 1 < links.size() && links[j + 1] == links[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? std::to_string(links[i]) : std::to_string(links[i]) + "-" + std::to_string(links[j]);
    i = j + 1;
  }
  return out;
}

struct LinkCounts {
  std::vector<int> links;  // links whose counters rose
  json worst;              // the link with the most CRC + ECC errors
};

LinkCounts link_counts(const json& gpu_delta) {
  LinkCounts out;
  unsigned long long worst = 0;
  const json* by_link = child(&gpu_delta, "nvlink_errors_by_link");
  if (by_link == nullptr || !by_link->is_array()) return out;
  for (const json& l : *by_link) {
    out.links.push_back(l.value("link", -1));
    const unsigned long long n = count(&l, "crc_flit") + count(&l, "crc_data") + count(&l, "ecc_data");
    if (n > worst) worst = n, out.worst = l;
  }
  return out;
}

void nvlink_error_item(const GpuRef& gpu, const json& delta, const RunTime& t, json& items) {
  const json* e = child(&delta, "nvlink_errors");
  const unsigned long long flit = count(e, "crc_flit"), data = count(e, "crc_data"), ecc = count(e, "ecc_data");
  if (flit + data + ecc == 0) return;
  const LinkCounts links = link_counts(delta);
  std::string what;
  for (const auto& [n, name] : {std::pair{flit, "CRC-flit"}, {data, "CRC-data"}, {ecc, "ECC-data"}})
    if (n > 0) what += text_format("%s+%llu %s", what.empty() ? "" : ", ", n, name);
  json evidence = {{"crc_flit", flit}, {"crc_data", data}, {"ecc_data", ecc},
                   {"seconds", t.seconds ? json(*t.seconds) : json()},
                   {"seconds_source", t.source}, {"links", links.links}, {"worst_link", links.worst},
                   {"by_link", delta.value("nvlink_errors_by_link", json::array())},
                   {"dcgm_crc_limit_per_second", kDcgmNvLinkCrcErrorsPerSecond}};
  std::string why;
  bool warn = ecc >= kDcgmMaxNvLinkError;
  if (t.seconds) {
    const double crc_rate = std::max(flit, data) / *t.seconds;
    evidence["crc_flit_per_second"] = flit / *t.seconds;
    evidence["crc_data_per_second"] = data / *t.seconds;
    evidence["ecc_data_per_second"] = ecc / *t.seconds;
    const bool over = crc_rate >= kDcgmNvLinkCrcErrorsPerSecond;
    warn = warn || over;
    why = text_format("CRC %.0f/s %s DCGM limit %.0f/s", crc_rate, over ? ">=" : "<", kDcgmNvLinkCrcErrorsPerSecond);
    what += text_format(" in %.1f s", *t.seconds);
  } else {
    why = "CRC rate unknown (no run time in meta)";
  }
  if (ecc > 0) why += "; ECC-data should stay 0 (DCGM 4.6)";
  std::string where = links.links.empty() ? "" : " links " + link_ranges(links.links);
  if (!links.worst.is_null())
    why += text_format("; worst link %d: +%llu CRC-data, +%llu ECC-data", links.worst.value("link", -1),
                  count(&links.worst, "crc_data"), count(&links.worst, "ecc_data"));
  items.push_back(item("nvlink_errors", warn ? "warn" : "info", &gpu, gpu.label + where + ": " + what + " (" + why + ")",
                       std::move(evidence)));
}

void nvlink_state_items(const GpuRef& gpu, const json& delta, const RunTime& t, json& items) {
  const json* e = child(&delta, "nvlink_errors");
  const unsigned long long replay = count(e, "replay"), recovery = count(e, "recovery");
  if (replay + recovery > 0) {
    std::vector<int> links;
    if (const json* by = child(&delta, "nvlink_errors_by_link"); by != nullptr && by->is_array())
      for (const json& l : *by)
        if (count(&l, "replay") + count(&l, "recovery") > 0) links.push_back(l.value("link", -1));
    items.push_back(item("nvlink_replay_recovery", "warn", &gpu,
                         gpu.label + (links.empty() ? "" : " links " + link_ranges(links)) +
                             text_format(": +%llu replay, +%llu recovery", replay, recovery) +
                             (t.seconds ? text_format(" in %.1f s", *t.seconds) : "") + " (DCGM: should be 0)",
                         {{"replay", replay}, {"recovery", recovery}, {"links", links}}));
  }
  const json* down = child(&delta, "links_down");
  if (down != nullptr && down->is_array() && !down->empty()) {
    items.push_back(item("links_down", "warn", &gpu,
                         gpu.label + text_format(": %zu NVLink link(s) went down during the run: ", down->size()) +
                             link_ranges(down->get<std::vector<int>>()) + " (DCGM: a link down is a failure)",
                         {{"links_down", *down}}));
  }
}

void ecc_items(const GpuRef& gpu, const json& delta, json& items) {
  const json* v = child(&delta, "ecc_volatile");
  const unsigned long long uncorrected = count(v, "uncorrected"), corrected = count(v, "corrected");
  if (uncorrected > 0)
    items.push_back(item("ecc", "warn", &gpu,
                         gpu.label + text_format(": +%llu uncorrected (double-bit) memory ECC errors during the run "
                                            "(DCGM: any is a failure)", uncorrected),
                         {{"uncorrected", uncorrected}, {"corrected", corrected}}));
  else if (corrected > 0)
    items.push_back(item("ecc", "info", &gpu,
                         gpu.label + text_format(": +%llu corrected (single-bit) memory ECC errors during the run "
                                            "(corrected in hardware; not a DCGM health failure)", corrected),
                         {{"uncorrected", uncorrected}, {"corrected", corrected}}));
}

// Clock event reasons set in either snapshot, other than idle and applications clocks.
std::vector<std::string> throttle_reasons(const json& meta, const std::string& uuid) {
  std::set<std::string> names;
  for (const char* when : {"health_before", "health_after"}) {
    const json* gpus = child(child(&meta, when), "gpus");
    if (gpus == nullptr || !gpus->is_array()) continue;
    for (const json& g : *gpus) {
      const json* n = child(child(&g, "clock_event_reasons"), "names");
      if (g.value("uuid", "") != uuid || n == nullptr || !n->is_array()) continue;
      for (const json& name : *n)
        if (name.is_string() && !is_benign_clock_reason(name.get<std::string>())) names.insert(name.get<std::string>());
    }
  }
  return {names.begin(), names.end()};
}

void throttle_item(const json& meta, const GpuRef& gpu, const json& delta, const RunTime& t, json& items) {
  json limited = json::object();
  std::string what;
  if (const json* v = child(&delta, "violation_ns"); v != nullptr && v->is_object())
    for (const auto& [name, ns] : v->items())
      if (name != "low_utilization" && count(v, name.c_str()) > 0) {
        limited[name] = ns;
        what += text_format("%s%s %.1f ms", what.empty() ? "" : ", ", name.c_str(), ns.get<double>() / 1e6);
      }
  const std::vector<std::string> reasons = throttle_reasons(meta, gpu.uuid);
  if (limited.empty() && reasons.empty()) return;
  std::string message = gpu.label + ": clocks held down during the run";
  if (!what.empty()) message += " by " + what + (t.seconds ? text_format(" of %.1f s", *t.seconds) : "");
  if (!reasons.empty()) {
    message += "; clock event reasons at a snapshot:";
    for (const auto& r : reasons) message += " " + r;
  }
  items.push_back(item("throttle", "warn", &gpu, message + " (DCGM: clocks event due to power/thermal is a warning)",
                       {{"violation_ns", limited}, {"clock_event_reasons", reasons}}));
}

void unavailable_item(const std::string& why, const GpuRef* gpu, json& items) {
  items.push_back(item("health_unavailable", "info", gpu, (gpu ? gpu->label + ": " : std::string()) + why, json::object()));
}

}  // namespace

json compute_verdicts(const json& meta) {
  json items = json::array();
  const json* delta = child(&meta, "health_delta");
  const RunTime t = run_time(meta);
  if (delta == nullptr) {
    unavailable_item("no GPU health recorded (meta.health_delta missing): links, ECC and clocks not judged", nullptr, items);
  } else if (!delta->value("available", false)) {
    unavailable_item("GPU health not judged: " + delta->value("reason", std::string("unknown reason")), nullptr, items);
  } else if (const json* gpus = child(delta, "gpus"); gpus != nullptr && gpus->is_array()) {
    for (const json& d : *gpus) {
      const GpuRef gpu = gpu_ref(meta, d);
      if (d.contains("error")) {
        unavailable_item("not judged: " + d["error"].dump(), &gpu, items);
        continue;
      }
      nvlink_error_item(gpu, d, t, items);
      nvlink_state_items(gpu, d, t, items);
      ecc_items(gpu, d, items);
      throttle_item(meta, gpu, d, t, items);
    }
  }
  contention_items(meta, items);
  json v = {{"status", "ok"}, {"contention", false}, {"throttled", false}, {"link_errors", false}, {"items", items}};
  for (const json& i : items) {
    const std::string code = i["code"];
    if (i["severity"] == "warn") v["status"] = "warn";
    if (code == "contention" && i["severity"] == "warn") v["contention"] = true;
    if (code == "throttle") v["throttled"] = true;
    if (code == "nvlink_errors" || code == "nvlink_replay_recovery" || code == "links_down") v["link_errors"] = true;
  }
  return v;
}

std::vector<std::string> verdict_lines(const json& verdicts) {
  std::vector<std::string> lines;
  const json* items = child(&verdicts, "items");
  if (items == nullptr || !items->is_array()) return lines;
  for (const json& i : *items)
    lines.push_back(std::string(i.value("severity", "") == "warn" ? "WARN " : "INFO ") + i.value("code", "") + ": " +
                    i.value("message", ""));
  return lines;
}

void add_verdicts(json& meta) {
  mark_own_processes(meta);
  meta["verdicts"] = compute_verdicts(meta);
}

void print_verdicts(std::FILE* out, const json& verdicts) {
  const std::vector<std::string> lines = verdict_lines(verdicts);
  const bool warn = verdicts.value("status", "ok") == "warn";
  std::fprintf(out, "\nHealth and contention (NVML before/after the sweep; thresholds from NVIDIA DCGM): %s\n",
               warn ? "WARNINGS" : lines.empty() ? "no warnings" : "no warnings, notes below");
  for (const auto& line : lines) std::fprintf(out, "  %s\n", line.c_str());
}

bool is_benign_clock_reason(const std::string& name) { return name == "gpu_idle" || name == "applications_clocks_setting"; }

}  // namespace p2pbench
