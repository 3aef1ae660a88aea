#include "topology/topology_report.hpp"

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <iomanip>
#include <sstream>
#include <vector>

#include "topology/fabric_info.hpp"
#include "topology/health.hpp"
#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"

namespace p2pbench {

using nlohmann::json;

namespace {

// A number with `precision` decimals, or "n/a" for null.
std::string num(const json& v, int precision = 0) {
  if (!v.is_number()) return "n/a";
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v.get<double>();
  return s.str();
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Every GPU NVML enumerates, named by bus id and UUID like CUDA's identities.
std::vector<GpuIdentity> all_gpus(const NvmlLibrary& lib) {
  const NvmlApi& api = lib.api();
  unsigned count = 0;
  lib.check(lib.call(api.DeviceGetCount_v2, &count), "counting GPUs (nvmlDeviceGetCount_v2)");
  std::vector<GpuIdentity> gpus;
  for (unsigned i = 0; i < count; ++i) {
    const std::string which = "GPU " + std::to_string(i);
    nvml::Device device = nullptr;
    lib.check(lib.call(api.DeviceGetHandleByIndex_v2, i, &device),
              "opening NVML " + which + " (nvmlDeviceGetHandleByIndex_v2)");
    nvml::PciInfo pci{};
    lib.check(lib.call(api.DeviceGetPciInfo_v3, device, &pci),
              "reading the PCI info of NVML " + which + " (nvmlDeviceGetPciInfo_v3)");
    pci.busId[sizeof pci.busId - 1] = '\0';
    gpus.push_back({pci.busId, ""});
  }
  return gpus;
}

void print_gpus(std::ostream& out, const std::vector<ResolvedGpu>& gpus) {
  out << "GPUs (NVML index order; CUDA ordinals may differ, see CUDA_DEVICE_ORDER):\n";
  out << "  " << pad("GPU", 6) << pad("Name", 28) << pad("PCI bus id", 18) << "UUID\n";
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    out << "  " << pad("GPU" + std::to_string(i), 6) << pad(gpus[i].name, 28)
        << pad(gpus[i].pci_bus_id, 18) << gpus[i].uuid << "\n";
  }
}

void print_matrix(std::ostream& out, const std::vector<std::vector<json>>& pairs) {
  const std::size_t n = pairs.size();
  std::size_t width = 6;
  for (const auto& row : pairs) {
    for (const json& p : row) {
      if (p.is_object()) width = std::max(width, p.value("topo_label", std::string()).size() + 2);
    }
  }
  out << "\nLink matrix (as nvidia-smi topo -m):\n  " << pad("", 6);
  for (std::size_t j = 0; j < n; ++j) out << pad("GPU" + std::to_string(j), width);
  out << "\n";
  for (std::size_t i = 0; i < n; ++i) {
    out << "  " << pad("GPU" + std::to_string(i), 6);
    for (std::size_t j = 0; j < n; ++j) {
      out << pad(i == j ? "X" : pairs[i][j].value("topo_label", std::string("?")), width);
    }
    out << "\n";
  }
  out << "  X = self, NV# = NVLink with # active links, PIX/PXB/PHB/NODE/SYS = PCIe path\n"
         "  (one switch / several switches / host bridge / same NUMA node / across NUMA nodes)\n";
}

std::string pair_detail(const json& p) {
  std::ostringstream s;
  const json& nv = p["nvlink"];
  const json& pcie = p["pcie"];
  if (nv.is_object()) {
    s << num(nv["active_links"]) << " links x " << num(nv["per_link_gbps"], 3) << " GB/s"
      << (nv.value("via_nvswitch", false) ? " via NVSwitch" : " direct") << ", NVLink "
      << (nv["version"].is_string() ? nv["version"].get<std::string>() : "?") << " (raw "
      << num(nv["version_raw"]) << ")";
  } else {
    s << "PCIe Gen" << num(pcie["max_gen"]) << " x" << num(pcie["max_width"]) << ", path "
      << (pcie["path"].is_string() ? pcie["path"].get<std::string>() : "n/a") << "; now";
    const char* sep = " ";
    for (const json& g : pcie["gpus"]) {
      s << sep << "Gen" << num(g["current_gen"]) << " x" << num(g["current_width"]);
      sep = " / ";
    }
  }
  return s.str();
}

void print_peaks(std::ostream& out, const std::vector<std::vector<json>>& pairs) {
  out << "\nTheoretical peak per direction (GB = 1e9 bytes):\n";
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    for (std::size_t j = i + 1; j < pairs.size(); ++j) {
      const json& p = pairs[i][j];
      const auto peak = peak_gbps(p);
      out << "  " << pad("GPU" + std::to_string(i) + " <-> GPU" + std::to_string(j), 16)
          << pad(peak ? num(*peak, 1) + " GB/s" : "unknown", 14) << "["
          << p.value("peak_source", "") << "] " << pair_detail(p) << "\n";
    }
  }
}

// "replay 0, recovery 0, ..." in the given key order ("n/a" for null).
std::string counters(const json& obj, std::initializer_list<const char*> keys) {
  std::ostringstream s;
  const char* sep = "";
  for (const char* key : keys) {
    s << sep << key << " " << (obj.is_object() && obj.contains(key) ? num(obj[key]) : "n/a");
    sep = ", ";
  }
  return s.str();
}

void print_health(std::ostream& out, const json& health) {
  out << "\nLink health (error counters since driver load):\n";
  std::size_t i = 0;
  for (const json& g : health["gpus"]) {
    out << "  GPU" << i++ << "  ";
    if (g.contains("error")) {
      out << g["error"].get<std::string>() << "\n";
      continue;
    }
    const json& nv = g["nvlink"];
    if (nv.is_object()) {
      out << "NVLink active " << num(nv["active_links"]) << "/" << nv["links"].size()
          << "; errors: "
          << counters(nv["errors_total"],
                      {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"})
          << "\n";
    } else {
      out << "NVLink: none (" << g["unavailable"].value("nvlink", "") << ")\n";
    }
    const json& ecc = g["ecc"];
    out << "        ECC "
        << (ecc["mode_current"].is_boolean() ? (ecc["mode_current"].get<bool>() ? "on" : "off")
                                             : "n/a")
        << "; volatile " << counters(ecc["volatile"], {"corrected", "uncorrected"})
        << "; clock events: ";
    const json& reasons = g["clock_event_reasons"];
    if (reasons.is_object()) {
      const auto names = reasons["names"].get<std::vector<std::string>>();
      out << (names.empty() ? "none" : "");
      for (std::size_t k = 0; k < names.size(); ++k) out << (k ? ", " : "") << names[k];
    } else {
      out << "n/a";
    }
    out << "\n";
  }
}

// Each GPU's multi-node NVLink registration: the domain a run would put it in (a fabric clique
// that may span hosts, else its host).
void print_fabric(std::ostream& out, const NvmlLibrary& lib, const std::vector<ResolvedGpu>& gpus) {
  out << "\nNVLink fabric (multi-node NVLink domains, nvmlDeviceGetGpuFabricInfoV):\n";
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const GpuFabric f = read_gpu_fabric(lib, gpus[i].device);
    out << "  " << pad("GPU" + std::to_string(i), 6);
    if (f.read()) {
      std::ostringstream mask;
      if (f.health_mask) mask << ", health mask 0x" << std::hex << *f.health_mask;
      out << "state " << f.state << (f.status.empty() ? "" : ", " + f.status) << ", " << fabric_domain_name(f)
          << mask.str() << "\n        ";
    }
    const std::string why_not = no_fabric_domain_reason(f);
    out << (why_not.empty() ? "domain: " + fabric_domain_name(f) + " (GPUs of other hosts in it share NVLink)"
                            : why_not + ": the domain is the host")
        << "\n";
  }
}

void report(std::ostream& out, const NvmlLibrary& lib) {
  const std::vector<GpuIdentity> ids = all_gpus(lib);
  const json health = health_snapshot(lib, ids);
  out << "NVML: " << lib.path() << ", driver "
      << (health["driver_version"].is_string() ? health["driver_version"].get<std::string>()
                                               : "n/a")
      << "\n";
  if (ids.empty()) {
    out << "No GPUs visible to NVML.\n";
    return;
  }
  std::vector<ResolvedGpu> gpus;
  for (const GpuIdentity& id : ids) gpus.push_back(resolve_gpu(lib, id));
  print_gpus(out, gpus);
  std::vector<std::vector<json>> pairs(ids.size(), std::vector<json>(ids.size()));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::size_t j = i + 1; j < ids.size(); ++j) {
      pairs[i][j] = pairs[j][i] = describe_pair(lib, ids[i], ids[j]);
    }
  }
  print_matrix(out, pairs);
  print_peaks(out, pairs);
  print_fabric(out, lib, gpus);
  print_health(out, health);
}

}  // namespace

int print_topology(std::ostream& out, const std::string& nvml_path) {
  auto opened = NvmlLibrary::open(nvml_path);
  if (const auto* reason = std::get_if<std::string>(&opened)) {
    out << *reason << "\n"
        << "--topology reads the GPUs through the NVIDIA driver's NVML library (libnvidia-ml.so.1): on a GPU node, "
           "`nvidia-smi` shows whether the driver is loaded. Without a GPU, `p2pbench --config FILE --dry-run` lists "
           "a run's cases and their time.\n";
    return 1;
  }
  try {
    report(out, std::get<NvmlLibrary>(opened));
  } catch (const std::exception& e) {
    out << "p2pbench --topology: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace p2pbench
