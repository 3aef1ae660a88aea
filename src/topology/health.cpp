#include "topology/health.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <utility>

#include "topology/throttle_health.hpp"

namespace p2pbench {

using nlohmann::json;

namespace {

struct CounterName {
  nvml::NvLinkErrorCounter counter;
  const char* name;
};
constexpr CounterName kNvLinkCounters[] = {
    {nvml::kDlReplay, "replay"},    {nvml::kDlRecovery, "recovery"}, {nvml::kDlCrcFlit, "crc_flit"},
    {nvml::kDlCrcData, "crc_data"}, {nvml::kDlEccData, "ecc_data"},
};

// `value` if rc is success, else the reason "<what>: <NVML message>".
template <typename T>
Queried<T> checked(const NvmlLibrary& lib, nvml::Return rc, T value, const std::string& what) {
  if (rc == nvml::kSuccess) return {std::move(value), {}};
  return {std::nullopt, lib.describe(rc, what)};
}

json nvlink_health(const NvmlLibrary& lib, nvml::Device device, json& gpu) {
  const NvLinkScan scan = scan_nvlinks(lib, device);
  if (scan.links.empty()) {
    gpu["unavailable"]["nvlink"] = scan.unsupported_reason;
    return nullptr;
  }
  json links = json::array();
  for (std::size_t i = 0; i < scan.links.size(); ++i) {
    links.push_back({{"link", scan.links[i]}, {"active", static_cast<bool>(scan.active[i])}});
  }
  json totals = json::object();
  for (const auto& c : kNvLinkCounters) {
    const std::string what = "nvmlDeviceGetNvLinkErrorCounter(" + std::string(c.name) + ")";
    Queried<unsigned long long> total;
    for (std::size_t i = 0; i < scan.links.size(); ++i) {
      const auto value = lib.query<unsigned long long>(what, lib.api().DeviceGetNvLinkErrorCounter,
                                                       device, scan.links[i], c.counter);
      // Per-link nulls carry no reason: it is the same for every link, kept once in the total.
      links[i][c.name] = value ? json(*value.value) : json(nullptr);
      if (value) {
        total.value = total.value.value_or(0) + *value.value;
      } else if (total.reason.empty()) {
        total.reason = value.reason;
      }
    }
    put(totals, c.name, total);  // sums the links that answered (an inactive one may not)
  }
  return {{"active_links", scan.active_count()},
          {"links", std::move(links)},
          {"errors_total", std::move(totals)}};
}

json ecc_health(const NvmlLibrary& lib, nvml::Device device) {
  const NvmlApi& api = lib.api();
  json ecc = json::object();
  nvml::EnableState current = nvml::kFeatureDisabled, pending = nvml::kFeatureDisabled;
  const nvml::Return rc = lib.call(api.DeviceGetEccMode, device, &current, &pending);
  put(ecc, "mode_current",
      checked(lib, rc, current == nvml::kFeatureEnabled, "nvmlDeviceGetEccMode"));
  put(ecc, "mode_pending",
      checked(lib, rc, pending == nvml::kFeatureEnabled, "nvmlDeviceGetEccMode"));
  const std::pair<nvml::EccCounterType, const char*> counters[] = {
      {nvml::kVolatileEcc, "volatile"}, {nvml::kAggregateEcc, "aggregate"}};
  const std::pair<nvml::MemoryErrorType, const char*> types[] = {
      {nvml::kMemoryErrorCorrected, "corrected"}, {nvml::kMemoryErrorUncorrected, "uncorrected"}};
  for (const auto& [counter, key] : counters) {
    json counts = json::object();
    for (const auto& [type, name] : types) {
      const std::string what =
          std::string("nvmlDeviceGetTotalEccErrors(") + key + ", " + name + ")";
      put(counts, name,
          lib.query<unsigned long long>(what, api.DeviceGetTotalEccErrors, device, type, counter));
    }
    ecc[key] = std::move(counts);
  }
  return ecc;
}

json mig_health(const NvmlLibrary& lib, nvml::Device device) {
  unsigned current = 0, pending = 0;
  const nvml::Return rc = lib.call(lib.api().DeviceGetMigMode, device, &current, &pending);
  json mig = json::object();
  put(mig, "current", checked(lib, rc, current == nvml::kDeviceMigEnable, "nvmlDeviceGetMigMode"));
  put(mig, "pending", checked(lib, rc, pending == nvml::kDeviceMigEnable, "nvmlDeviceGetMigMode"));
  return mig;
}

json clocks_health(const NvmlLibrary& lib, nvml::Device device) {
  const auto current = lib.api().DeviceGetClockInfo;
  const auto max = lib.api().DeviceGetMaxClockInfo;
  json clocks = json::object();
  put(clocks, "sm",
      lib.query<unsigned>("nvmlDeviceGetClockInfo(SM)", current, device, nvml::kClockSm));
  put(clocks, "sm_max",
      lib.query<unsigned>("nvmlDeviceGetMaxClockInfo(SM)", max, device, nvml::kClockSm));
  put(clocks, "mem",
      lib.query<unsigned>("nvmlDeviceGetClockInfo(MEM)", current, device, nvml::kClockMem));
  put(clocks, "mem_max",
      lib.query<unsigned>("nvmlDeviceGetMaxClockInfo(MEM)", max, device, nvml::kClockMem));
  return clocks;
}

// Compute processes on the GPU: they share its copy engines and memory bandwidth.
Queried<json> processes(const NvmlLibrary& lib, nvml::Device device) {
  const auto fn = lib.api().DeviceGetComputeRunningProcesses_v3;
  const std::string what = "nvmlDeviceGetComputeRunningProcesses_v3";
  std::vector<nvml::ProcessInfo> infos;
  unsigned count = 0;
  nvml::Return rc = lib.call(fn, device, &count, static_cast<nvml::ProcessInfo*>(nullptr));
  // The list can grow between the sizing call and the filling call: retry a few times.
  for (int attempt = 0; attempt < 4 && rc == nvml::kErrorInsufficientSize; ++attempt) {
    infos.resize(count + 8);
    count = static_cast<unsigned>(infos.size());
    rc = lib.call(fn, device, &count, infos.data());
  }
  infos.resize(std::min<std::size_t>(count, infos.size()));
  json list = json::array();
  for (const auto& p : infos) {
    const bool known = p.usedGpuMemory != nvml::kValueNotAvailable;
    list.push_back({{"pid", p.pid},
                    {"used_memory_bytes", known ? json(p.usedGpuMemory) : json(nullptr)},
                    {"is_self", p.pid == static_cast<unsigned>(getpid())}});
  }
  return checked(lib, rc, std::move(list), what);
}

json gpu_health(const NvmlLibrary& lib, const GpuIdentity& id) {
  json gpu = {{"pci_bus_id", id.pci_bus_id}, {"uuid", id.uuid}};
  ResolvedGpu g;
  try {
    g = resolve_gpu(lib, id);
  } catch (const std::exception& e) {
    gpu["error"] = e.what();
    return gpu;
  }
  const NvmlApi& api = lib.api();
  gpu = {{"pci_bus_id", g.pci_bus_id}, {"uuid", g.uuid}, {"name", g.name}};
  json nvlink = nvlink_health(lib, g.device, gpu);  // may add gpu["unavailable"]["nvlink"]
  gpu["nvlink"] = std::move(nvlink);
  gpu["ecc"] = ecc_health(lib, g.device);
  gpu["mig"] = mig_health(lib, g.device);
  gpu["clocks_mhz"] = clocks_health(lib, g.device);
  put(gpu, "persistence_mode", persistence_mode(lib, g.device));
  gpu["violation_ns"] = violation_times_ns(lib, g.device);
  const auto reasons = lib.query<unsigned long long>(
      "nvmlDeviceGetCurrentClocksEventReasons", api.DeviceGetCurrentClocksEventReasons, g.device);
  put(gpu, "clock_event_reasons",
      reasons ? Queried<json>{json{{"raw", *reasons.value},
                                   {"names", clock_event_reason_names(*reasons.value)}},
                              {}}
              : Queried<json>{std::nullopt, reasons.reason});
  put(gpu, "temperature_c",
      lib.query<unsigned>("nvmlDeviceGetTemperature(GPU)", api.DeviceGetTemperature, g.device,
                          nvml::kTemperatureGpu));
  const auto milliwatts =
      lib.query<unsigned>("nvmlDeviceGetPowerUsage", api.DeviceGetPowerUsage, g.device);
  put(gpu, "power_w",
      milliwatts ? Queried<double>{*milliwatts.value / 1e3, {}}
                 : Queried<double>{std::nullopt, milliwatts.reason});
  put(gpu, "processes", processes(lib, g.device));
  return gpu;
}

// obj[key] if obj is an object holding key, else nullptr.
const json* child(const json* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  const auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

// after - before for every counter of `after` (an object of counters).
json diff_counters(const json* before, const json* after, bool& increased) {
  json out = json::object();
  if (after == nullptr || !after->is_object()) return nullptr;
  for (const auto& [key, a] : after->items()) {
    if (key == "unavailable") continue;
    const json* b = child(before, key.c_str());
    if (!a.is_number_unsigned() || b == nullptr || !b->is_number_unsigned()) {
      out[key] = nullptr;
      out["unavailable"][key] = "not a number in both snapshots";
      continue;
    }
    const auto av = a.get<unsigned long long>(), bv = b->get<unsigned long long>();
    if (av < bv) {
      out[key] = nullptr;
      out["unavailable"][key] = "counter went backwards (reset by a driver reload?)";
      continue;
    }
    out[key] = av - bv;
    increased = increased || av > bv;
  }
  return out;
}

// The error counters of one per-link entry, without its "link" and "active" keys.
json link_counters(const json& link) {
  json out = json::object();
  for (const auto& c : kNvLinkCounters) {
    if (link.contains(c.name)) out[c.name] = link[c.name];
  }
  return out;
}

const json* find_gpu(const json& snapshot, const json& gpu) {
  const json* gpus = child(&snapshot, "gpus");
  if (gpus == nullptr || !gpus->is_array()) return nullptr;
  for (const char* key : {"uuid", "pci_bus_id"}) {
    const std::string wanted = gpu.value(key, "");
    if (wanted.empty()) continue;
    for (const json& g : *gpus) {
      if (g.value(key, "") == wanted) return &g;
    }
  }
  return nullptr;
}

json gpu_delta(const json& before, const json& after) {
  json d = {{"pci_bus_id", after.value("pci_bus_id", "")}, {"uuid", after.value("uuid", "")}};
  if (after.contains("error") || before.contains("error")) {
    d["error"] = after.contains("error") ? after["error"] : before["error"];
    return d;
  }
  bool increased = false;
  const json* nv_b = child(&before, "nvlink");
  const json* nv_a = child(&after, "nvlink");
  d["nvlink_errors"] =
      diff_counters(child(nv_b, "errors_total"), child(nv_a, "errors_total"), increased);
  json by_link = json::array(), down = json::array(), up = json::array();
  const json* links_a = child(nv_a, "links");
  const json* links_b = child(nv_b, "links");
  if (links_a != nullptr && links_b != nullptr && links_a->is_array() && links_b->is_array()) {
    for (const json& la : *links_a) {
      for (const json& lb : *links_b) {
        if (lb.value("link", -1) != la.value("link", -2)) continue;
        bool link_increased = false;
        const json cb = link_counters(lb), ca = link_counters(la);
        json diff = diff_counters(&cb, &ca, link_increased);
        diff.erase("unavailable");  // per-link reasons: see nvlink_errors
        if (link_increased) {
          diff["link"] = la["link"];
          by_link.push_back(std::move(diff));
        }
        if (lb.value("active", false) && !la.value("active", false)) down.push_back(la["link"]);
        if (!lb.value("active", false) && la.value("active", false)) up.push_back(la["link"]);
      }
    }
  }
  d["nvlink_errors_by_link"] = std::move(by_link);
  increased = increased || !down.empty();
  d["links_down"] = std::move(down);
  d["links_up"] = std::move(up);
  const json* ecc_b = child(&before, "ecc");
  const json* ecc_a = child(&after, "ecc");
  d["ecc_volatile"] = diff_counters(child(ecc_b, "volatile"), child(ecc_a, "volatile"), increased);
  d["ecc_aggregate"] =
      diff_counters(child(ecc_b, "aggregate"), child(ecc_a, "aggregate"), increased);
  // Limiter time is not an error: it does not count towards errors_increased.
  bool limited = false;
  d["violation_ns"] = diff_counters(child(&before, "violation_ns"), child(&after, "violation_ns"), limited);
  d["errors_increased"] = increased;
  return d;
}

}  // namespace

json health_snapshot(const NvmlLibrary& lib, const std::vector<GpuIdentity>& gpus) {
  // The time lets a counter's increase be read as a rate (errors per second of the run).
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  json out = {{"available", true}, {"nvml_library", lib.path()}, {"taken_at_unix_s", now_s}};
  char version[nvml::kDriverVersionBufferSize] = {};
  const nvml::Return rc =
      lib.call(lib.api().SystemGetDriverVersion, version, nvml::kDriverVersionBufferSize);
  version[sizeof version - 1] = '\0';
  put(out, "driver_version", checked(lib, rc, std::string(version), "nvmlSystemGetDriverVersion"));
  json list = json::array();
  for (const GpuIdentity& id : gpus) list.push_back(gpu_health(lib, id));
  out["gpus"] = std::move(list);
  return out;
}

json health_unavailable(const std::string& reason) {
  return {{"available", false}, {"reason", reason}};
}

json health_delta(const json& before, const json& after) {
  for (const json* s : {&before, &after}) {
    if (!s->is_object() || !s->value("available", false)) {
      const std::string reason =
          s->is_object() ? s->value("reason", "not a health snapshot") : "not a health snapshot";
      return health_unavailable((s == &before ? "before: " : "after: ") + reason);
    }
  }
  json gpus = json::array();
  bool increased = false;
  for (const json& a : after["gpus"]) {
    const json* b = find_gpu(before, a);
    json d = b != nullptr ? gpu_delta(*b, a)
                          : json{{"pci_bus_id", a.value("pci_bus_id", "")},
                                 {"uuid", a.value("uuid", "")},
                                 {"error", "GPU missing from the 'before' snapshot"}};
    increased = increased || d.value("errors_increased", false);
    gpus.push_back(std::move(d));
  }
  json delta = {{"available", true}, {"gpus", std::move(gpus)}, {"errors_increased", increased}};
  if (before.contains("taken_at_unix_s") && after.contains("taken_at_unix_s"))
    delta["seconds"] = after["taken_at_unix_s"].get<double>() - before["taken_at_unix_s"].get<double>();
  return delta;
}

std::vector<std::string> clock_event_reason_names(unsigned long long bits) {
  static constexpr std::pair<unsigned long long, const char*> kNames[] = {
      {nvml::kClocksEventGpuIdle, "gpu_idle"},
      {nvml::kClocksEventApplicationsClocksSetting, "applications_clocks_setting"},
      {nvml::kClocksEventSwPowerCap, "sw_power_cap"},
      {nvml::kClocksEventHwSlowdown, "hw_slowdown"},
      {nvml::kClocksEventSyncBoost, "sync_boost"},
      {nvml::kClocksEventSwThermalSlowdown, "sw_thermal_slowdown"},
      {nvml::kClocksEventHwThermalSlowdown, "hw_thermal_slowdown"},
      {nvml::kClocksEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {nvml::kClocksEventDisplayClockSetting, "display_clock_setting"},
      {nvml::kClocksEventBoardLimit, "board_limit"},
      {nvml::kClocksEventReliability, "reliability"},
  };
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames) {
    if (bits & bit) {
      names.emplace_back(name);
      bits &= ~bit;
    }
  }
  for (int i = 0; i < 64; ++i) {  // bits newer than this table: keep them visible
    if (bits & (1ULL << i)) {
      char name[32];
      std::snprintf(name, sizeof name, "unknown_0x%llx", 1ULL << i);
      names.emplace_back(name);
    }
  }
  return names;
}

}  // namespace p2pbench
