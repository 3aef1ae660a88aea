#include "topology/topology.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace p2pbench {

using nlohmann::json;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// NVML's fixed-size char arrays are NUL-terminated, but do not trust it.
template <std::size_t N>
std::string c_string(const char (&buffer)[N]) {
  return std::string(buffer, strnlen(buffer, N));
}

std::string device_string(const NvmlLibrary& lib, nvml::DeviceGetStringFn fn, nvml::Device device,
                          unsigned size, const std::string& what) {
  std::string buffer(size, '\0');
  lib.check(lib.call(fn, device, buffer.data(), size), what);
  buffer.resize(strnlen(buffer.c_str(), size));
  return buffer;
}

bool same_pci_device(const PciAddress& a, const PciAddress& b) {
  // NVLink remote PCI info carries no function number; GPUs are function 0 anyway.
  return a.domain == b.domain && a.bus == b.bus && a.device == b.device;
}

std::optional<PciAddress> address_of(const nvml::PciInfo& pci) {
  if (auto a = parse_pci_bus_id(c_string(pci.busId))) return a;
  if (auto a = parse_pci_bus_id(c_string(pci.busIdLegacy))) return a;
  return PciAddress{pci.domain, pci.bus, pci.device, 0};
}

enum class Remote { kPeer, kSwitch, kOther };

// What the far end of an active link of `device` is, relative to the pair's other GPU.
Remote classify_link(const NvmlLibrary& lib, nvml::Device device, unsigned link,
                     const PciAddress& peer) {
  const NvmlApi& api = lib.api();
  nvml::NvLinkDeviceType type = nvml::kNvLinkDeviceUnknown;
  const bool typed =
      lib.call(api.DeviceGetNvLinkRemoteDeviceType, device, link, &type) == nvml::kSuccess;
  if (typed && type == nvml::kNvLinkDeviceSwitch) return Remote::kSwitch;
  nvml::PciInfo pci{};
  if (lib.call(api.DeviceGetNvLinkRemotePciInfo_v2, device, link, &pci) != nvml::kSuccess) {
    return Remote::kOther;
  }
  const PciAddress remote = *address_of(pci);
  if (same_pci_device(remote, peer)) return Remote::kPeer;
  if (typed && type != nvml::kNvLinkDeviceUnknown) return Remote::kOther;  // other GPU or CPU
  // Remote type unknown: an end that NVML does not know as a GPU is an NVSwitch.
  nvml::Device other = nullptr;
  const nvml::Return rc =
      lib.call(api.DeviceGetHandleByPciBusId_v2, format_pci_bus_id(remote).c_str(), &other);
  return rc == nvml::kErrorNotFound ? Remote::kSwitch : Remote::kOther;
}

struct LinkCount {
  std::vector<unsigned> to_peer, to_switch;
};

LinkCount count_links(const NvmlLibrary& lib, nvml::Device device, const NvLinkScan& scan,
                      const PciAddress& peer) {
  LinkCount count;
  for (std::size_t i = 0; i < scan.links.size(); ++i) {
    if (!scan.active[i]) continue;
    switch (classify_link(lib, device, scan.links[i], peer)) {
      case Remote::kPeer:
        count.to_peer.push_back(scan.links[i]);
        break;
      case Remote::kSwitch:
        count.to_switch.push_back(scan.links[i]);
        break;
      case Remote::kOther:
        break;
    }
  }
  return count;
}

struct Peak {
  std::optional<double> gbps;
  std::string source = "none";
  std::string reason;
};

json gpu_json(const ResolvedGpu& g) {
  return {{"pci_bus_id", g.pci_bus_id},
          {"uuid", g.uuid},
          {"name", g.name},
          {"matched_by", g.matched_by}};
}

// Per-link rate: NVML's common speed field, else its per-link speed fields, else the nominal
// per-version table. `links` are the pair's links on `device`; `active` how many the pair uses.
void nvlink_rate(const NvmlLibrary& lib, nvml::Device device, const std::vector<unsigned>& links,
                 unsigned active, std::optional<unsigned> version_raw, json& nv, Peak& peak) {
  const auto common = query_field(lib, device, nvml::kFiNvLinkSpeedMbpsCommon, 0,
                                  "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON");
  if (common && *common.value > 0) {
    // NVML's MBps are 1e6 bytes/s (nvidia-smi prints 26562 MBps as 26.562 GB/s).
    nv["per_link_gbps"] = *common.value / 1e3;
    peak = {active * *common.value / 1e3, "nvml_nvlink_speed_common", {}};
    return;
  }
  nv["unavailable"]["nvml_nvlink_speed_common"] =
      common ? "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON reads 0" : common.reason;
  double sum_mbps = 0;
  std::string per_link_reason;
  for (unsigned link : links) {
    const auto speed =
        query_field(lib, device, nvml::kFiNvLinkGetSpeed, link,
                    "NVML_FI_DEV_NVLINK_GET_SPEED(link " + std::to_string(link) + ")");
    if (!speed || *speed.value <= 0) {
      per_link_reason = speed ? "NVML_FI_DEV_NVLINK_GET_SPEED reads 0" : speed.reason;
      break;
    }
    sum_mbps += *speed.value;
  }
  if (per_link_reason.empty() && !links.empty()) {
    const double mean_mbps = sum_mbps / static_cast<double>(links.size());
    nv["per_link_gbps"] = mean_mbps / 1e3;
    peak = {active * mean_mbps / 1e3, "nvml_nvlink_speed_per_link", {}};
    return;
  }
  nv["unavailable"]["nvml_nvlink_speed_per_link"] = per_link_reason;
  const auto table = version_raw ? nvlink_table_gbps(*version_raw) : std::nullopt;
  if (table) {
    nv["per_link_gbps"] = *table;
    peak = {active * *table, "nvlink_version_table", {}};
  } else {
    nv["per_link_gbps"] = nullptr;
    peak = {std::nullopt, "none", "no NVLink speed field and no table entry for this version"};
  }
}

// The NVLink part of a pair, or nullopt (reason in `unavailable`) when no link joins them.
std::optional<json> describe_nvlink(const NvmlLibrary& lib, const ResolvedGpu& a,
                                    const ResolvedGpu& b, json& unavailable, Peak& peak) {
  const NvLinkScan scan_a = scan_nvlinks(lib, a.device);
  const NvLinkScan scan_b = scan_nvlinks(lib, b.device);
  if (scan_a.links.empty() || scan_b.links.empty()) {
    unavailable["nvlink"] =
        scan_a.links.empty() ? scan_a.unsupported_reason : scan_b.unsupported_reason;
    return std::nullopt;
  }
  const LinkCount ca = count_links(lib, a.device, scan_a, *parse_pci_bus_id(b.pci_bus_id));
  const LinkCount cb = count_links(lib, b.device, scan_b, *parse_pci_bus_id(a.pci_bus_id));
  json nv;
  std::vector<unsigned> links;
  unsigned active = 0;
  if (!ca.to_peer.empty()) {
    links = ca.to_peer;
    active = static_cast<unsigned>(links.size());
    nv["via_nvswitch"] = false;
  } else if (!ca.to_switch.empty() && !cb.to_switch.empty()) {
    // Every switch link carries traffic to any peer; the side with fewer links limits the pair.
    links = ca.to_switch;
    active = static_cast<unsigned>(std::min(ca.to_switch.size(), cb.to_switch.size()));
    nv["via_nvswitch"] = true;
    nv["active_links_per_gpu"] = {ca.to_switch.size(), cb.to_switch.size()};
  } else {
    unavailable["nvlink"] = "no active NVLink between the two GPUs (directly or through NVSwitch)";
    return std::nullopt;
  }
  nv["active_links"] = active;
  nv["links"] = links;  // link indices on the first GPU
  const auto version = lib.query<unsigned>(
      "nvmlDeviceGetNvLinkVersion", lib.api().DeviceGetNvLinkVersion, a.device, links.front());
  put(nv, "version_raw", version);
  const auto name = version ? nvlink_version_name(*version.value) : std::nullopt;
  nv["version"] = name ? json(*name) : json(nullptr);
  if (version && !name) nv["unavailable"]["version"] = "unknown nvmlNvlinkVersion_t value";
  nvlink_rate(lib, a.device, links, active, version.value, nv, peak);
  nv["per_link_source"] = peak.source;
  return nv;
}

json pcie_gpu(const NvmlLibrary& lib, nvml::Device device) {
  const NvmlApi& api = lib.api();
  json g = json::object();
  put(g, "max_gen",
      lib.query<unsigned>("nvmlDeviceGetMaxPcieLinkGeneration", api.DeviceGetMaxPcieLinkGeneration,
                          device));
  put(g, "max_width",
      lib.query<unsigned>("nvmlDeviceGetMaxPcieLinkWidth", api.DeviceGetMaxPcieLinkWidth, device));
  // An idle link trains down: the current values are context, the max ones set the peak.
  put(g, "current_gen",
      lib.query<unsigned>("nvmlDeviceGetCurrPcieLinkGeneration",
                          api.DeviceGetCurrPcieLinkGeneration, device));
  put(g, "current_width",
      lib.query<unsigned>("nvmlDeviceGetCurrPcieLinkWidth", api.DeviceGetCurrPcieLinkWidth,
                          device));
  return g;
}

json describe_pcie(const NvmlLibrary& lib, const ResolvedGpu& a, const ResolvedGpu& b, Peak& peak) {
  json p = json::object();
  const auto level =
      lib.query<nvml::TopologyLevel>("nvmlDeviceGetTopologyCommonAncestor",
                                     lib.api().DeviceGetTopologyCommonAncestor, a.device, b.device);
  const auto cls = level ? pcie_path_class(*level.value) : std::nullopt;
  p["path"] = cls ? json(*cls) : json(nullptr);
  p["path_raw"] = level ? json(static_cast<int>(*level.value)) : json(nullptr);
  if (!cls)
    p["unavailable"]["path"] = level ? "unknown nvmlGpuTopologyLevel_t value" : level.reason;
  const json ga = pcie_gpu(lib, a.device), gb = pcie_gpu(lib, b.device);
  p["gpus"] = {ga, gb};
  // The pair is limited by the slower end.
  for (const char* key : {"max_gen", "max_width"}) {
    if (ga[key].is_number() && gb[key].is_number()) {
      p[key] = std::min(ga[key].get<unsigned>(), gb[key].get<unsigned>());
    } else {
      p[key] = nullptr;
    }
  }
  const auto lane =
      p["max_gen"].is_number() ? pcie_lane_gbps(p["max_gen"].get<unsigned>()) : std::nullopt;
  p["lane_gbps"] = lane ? json(*lane) : json(nullptr);
  if (lane && p["max_width"].is_number()) {
    peak = {*lane * p["max_width"].get<unsigned>(), "pcie_gen_table", {}};
  } else {
    peak = {std::nullopt, "pcie_gen_table",
            "PCIe max generation/width unknown or not in the table"};
  }
  return p;
}

}  // namespace

ResolvedGpu resolve_gpu(const NvmlLibrary& lib, const GpuIdentity& id) {
  const NvmlApi& api = lib.api();
  if (id.pci_bus_id.empty() && id.uuid.empty()) {
    throw InputError("GPU identity has neither a PCI bus id nor a UUID");
  }
  ResolvedGpu gpu;
  std::string bus_note;
  if (!id.pci_bus_id.empty()) {
    const auto address = parse_pci_bus_id(id.pci_bus_id);
    if (!address) {
      throw InputError("pci_bus_id", id.pci_bus_id,
                       "not a PCI bus id (domain:bus:device.function)");
    }
    const nvml::Return rc = lib.call(api.DeviceGetHandleByPciBusId_v2,
                                     format_pci_bus_id(*address).c_str(), &gpu.device);
    const std::string what = "looking up the GPU with PCI bus id " + id.pci_bus_id +
                             " (nvmlDeviceGetHandleByPciBusId_v2)";
    if (rc == nvml::kSuccess) {
      gpu.matched_by = "pci_bus_id";
    } else if (rc != nvml::kErrorNotFound || id.uuid.empty()) {
      lib.check(rc, what);
    } else {
      bus_note = " after " + lib.describe(rc, what);  // containers may remap bus ids: try UUID
    }
  }
  if (gpu.matched_by.empty()) {
    lib.check(
        lib.call(api.DeviceGetHandleByUUID, id.uuid.c_str(), &gpu.device),
        "looking up the GPU with UUID " + id.uuid + bus_note + " (nvmlDeviceGetHandleByUUID)");
    gpu.matched_by = "uuid";
  }
  const std::string label = id.pci_bus_id.empty() ? id.uuid : id.pci_bus_id;
  nvml::PciInfo pci{};
  lib.check(lib.call(api.DeviceGetPciInfo_v3, gpu.device, &pci),
            "reading the PCI info of GPU " + label + " (nvmlDeviceGetPciInfo_v3)");
  gpu.pci_bus_id = format_pci_bus_id(*address_of(pci));
  gpu.uuid = device_string(lib, api.DeviceGetUUID, gpu.device, nvml::kDeviceUuidBufferSize,
                           "reading the UUID of GPU " + label + " (nvmlDeviceGetUUID)");
  gpu.name = device_string(lib, api.DeviceGetName, gpu.device, nvml::kDeviceNameBufferSize,
                           "reading the name of GPU " + label + " (nvmlDeviceGetName)");
  // Both given: they must name one GPU (MIG UUIDs name an instance, not the GPU: not compared).
  if (gpu.matched_by == "pci_bus_id" && id.uuid.rfind("GPU-", 0) == 0 &&
      lower(id.uuid) != lower(gpu.uuid)) {
    throw RuntimeFailure("PCI bus id " + id.pci_bus_id + " is GPU " + gpu.uuid +
                         " in NVML, but CUDA gave UUID " + id.uuid + " for it");
  }
  return gpu;
}

unsigned NvLinkScan::active_count() const {
  return static_cast<unsigned>(std::count(active.begin(), active.end(), true));
}

NvLinkScan scan_nvlinks(const NvmlLibrary& lib, nvml::Device device) {
  NvLinkScan scan;
  std::string first_error;
  // Links beyond the device's count answer INVALID_ARGUMENT; a GPU without NVLink answers
  // NOT_SUPPORTED for every link.
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    nvml::EnableState state = nvml::kFeatureDisabled;
    const nvml::Return rc = lib.call(lib.api().DeviceGetNvLinkState, device, link, &state);
    if (rc == nvml::kSuccess) {
      scan.links.push_back(link);
      scan.active.push_back(state == nvml::kFeatureEnabled);
    } else if (rc != nvml::kErrorInvalidArgument && first_error.empty()) {
      first_error = lib.describe(rc, "nvmlDeviceGetNvLinkState(link " + std::to_string(link) + ")");
    }
  }
  if (scan.links.empty()) {
    scan.unsupported_reason =
        first_error.empty() ? "nvmlDeviceGetNvLinkState: no NVLink link index exists" : first_error;
  }
  return scan;
}

Queried<double> query_field(const NvmlLibrary& lib, nvml::Device device, unsigned field_id,
                            unsigned scope_id, const std::string& field_name) {
  nvml::FieldValue fv{};
  fv.fieldId = field_id;
  fv.scopeId = scope_id;
  const std::string what = "nvmlDeviceGetFieldValues(" + field_name + ")";
  nvml::Return rc = lib.call(lib.api().DeviceGetFieldValues, device, 1, &fv);
  if (rc == nvml::kSuccess) rc = fv.nvmlReturn;  // the call succeeds even when a field fails
  if (rc != nvml::kSuccess) return {std::nullopt, lib.describe(rc, what)};
  switch (fv.valueType) {
    case nvml::kValueDouble:
      return {fv.value.dVal, {}};
    case nvml::kValueUnsignedInt:
      return {static_cast<double>(fv.value.uiVal), {}};
    case nvml::kValueUnsignedLong:
      return {static_cast<double>(fv.value.ulVal), {}};
    case nvml::kValueUnsignedLongLong:
      return {static_cast<double>(fv.value.ullVal), {}};
    case nvml::kValueSignedLongLong:
      return {static_cast<double>(fv.value.sllVal), {}};
    case nvml::kValueSignedInt:
      return {static_cast<double>(fv.value.siVal), {}};
    case nvml::kValueUnsignedShort:
      return {static_cast<double>(fv.value.usVal), {}};
  }
  return {std::nullopt, what + ": unknown value type " + std::to_string(fv.valueType)};
}

json describe_pair(const NvmlLibrary& lib, const GpuIdentity& a, const GpuIdentity& b) {
  const ResolvedGpu ga = resolve_gpu(lib, a);
  const ResolvedGpu gb = resolve_gpu(lib, b);
  json out = {{"gpus", {gpu_json(ga), gpu_json(gb)}}};
  json unavailable = json::object();
  Peak pcie_peak, nvlink_peak, peak;
  out["pcie"] = describe_pcie(lib, ga, gb, pcie_peak);
  if (ga.device == gb.device) {
    out["link_type"] = "same_device";
    out["topo_label"] = "X";
    out["nvlink"] = nullptr;
    peak = {std::nullopt, "none", "both identities name the same GPU"};
  } else if (auto nv = describe_nvlink(lib, ga, gb, unavailable, nvlink_peak)) {
    out["link_type"] = "nvlink";
    out["topo_label"] = "NV" + std::to_string((*nv)["active_links"].get<unsigned>());
    out["nvlink"] = std::move(*nv);
    peak = nvlink_peak;
  } else {
    out["link_type"] = "pcie";
    out["topo_label"] = out["pcie"]["path"].is_string() ? out["pcie"]["path"] : json("PCIe");
    out["nvlink"] = nullptr;
    peak = pcie_peak;
  }
  out["peak_gbps_per_direction"] = peak.gbps ? json(*peak.gbps) : json(nullptr);
  out["peak_source"] = peak.source;
  if (!peak.gbps) unavailable["peak_gbps_per_direction"] = peak.reason;
  out["unavailable"] = std::move(unavailable);
  return out;
}

std::optional<double> peak_gbps(const json& pair) {
  const auto it = pair.find("peak_gbps_per_direction");
  if (it == pair.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace p2pbench
