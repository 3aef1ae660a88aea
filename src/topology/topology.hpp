// How two GPUs are connected (NVLink direct / through NVSwitch, or PCIe) and the theoretical
// peak per direction that bandwidth results are compared against.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "topology/nvml_library.hpp"

namespace p2pbench {

// A GPU as CUDA names it: cudaDeviceGetPCIBusId ("0000:00:06.0") and/or the CUDA UUID formatted
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". Either may be empty, not both. Never an index:
// CUDA and NVML number devices differently.
struct GpuIdentity {
  std::string pci_bus_id;
  std::string uuid;
};

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  bool operator==(const PciAddress& o) const {
    return domain == o.domain && bus == o.bus && device == o.device && function == o.function;
  }
};

// Accepts "domain:bus:device.function", "domain:bus:device" and "bus:device.function" (hex), as
// NVML does; nullopt if it is none of these.
std::optional<PciAddress> parse_pci_bus_id(const std::string& text);
// NVML's spelling: "00000000:06:00.0".
std::string format_pci_bus_id(const PciAddress& address);

// A GPU found in NVML, with NVML's own names for it.
struct ResolvedGpu {
  nvml::Device device = nullptr;
  std::string pci_bus_id;  // NVML's form
  std::string uuid;
  std::string name;
  std::string matched_by;  // "pci_bus_id" or "uuid"
};

// Finds the GPU by PCI bus id (preferred), else by UUID. Throws NvmlError when NVML has no such
// GPU, RuntimeFailure when the bus id and a "GPU-" UUID name two different GPUs, InputError when
// the identity is empty or the bus id is malformed.
ResolvedGpu resolve_gpu(const NvmlLibrary& lib, const GpuIdentity& id);

// NVLink links that NVML reports for a device (the index set is sparse on some GPUs).
struct NvLinkScan {
  std::vector<unsigned> links;     // indices whose state NVML answered
  std::vector<bool> active;        // parallel to links
  std::string unsupported_reason;  // set when `links` is empty
  unsigned active_count() const;
};
NvLinkScan scan_nvlinks(const NvmlLibrary& lib, nvml::Device device);

// Stores q's value under obj[key], or null there and the reason under obj["unavailable"][key].
template <typename T>
void put(nlohmann::json& obj, const std::string& key, const Queried<T>& q) {
  if (q) {
    obj[key] = *q.value;
  } else {
    obj[key] = nullptr;
    obj["unavailable"][key] = q.reason;
  }
}

// One nvmlDeviceGetFieldValues entry as a number; `field_name` goes into the reason.
Queried<double> query_field(const NvmlLibrary& lib, nvml::Device device, unsigned field_id,
                            unsigned scope_id, const std::string& field_name);

// nvmlNvlinkVersion_t -> "4.0"; nullopt for values we do not know.
std::optional<std::string> nvlink_version_name(unsigned raw);
// nvmlGpuTopologyLevel_t -> "PIX", "PXB", "PHB", "NODE", "SYS", "same board".
std::optional<std::string> pcie_path_class(int level);
// GB/s per lane per direction after line encoding, by PCIe generation ("pcie_gen_table").
std::optional<double> pcie_lane_gbps(unsigned generation);
// Nominal GB/s per link per direction by NVLink version ("nvlink_version_table").
std::optional<double> nvlink_table_gbps(unsigned raw_version);

// Describes the link between two GPUs. Keys: gpus[2], link_type ("nvlink" | "pcie" |
// "same_device"), topo_label ("NV18", "PXB", ...), nvlink (object or null), pcie,
// peak_gbps_per_direction (number or null), peak_source, unavailable {key: reason}.
// Throws (see resolve_gpu) when either GPU cannot be found.
nlohmann::json describe_pair(const NvmlLibrary& lib, const GpuIdentity& a, const GpuIdentity& b);

// The pair's theoretical peak per direction in GB/s (1e9 B/s), if describe_pair found one.
std::optional<double> peak_gbps(const nlohmann::json& pair_description);

}  // namespace p2pbench
