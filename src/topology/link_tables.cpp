// What NVML's raw numbers mean: PCI bus ids in and out, the NVLink version and its per-link
// rate, the PCIe path class and lane rate. Pure tables, no NVML call (unit-tested on CI).
#include <cstdio>

#include "topology/topology.hpp"

namespace p2pbench {

std::optional<PciAddress> parse_pci_bus_id(const std::string& text) {
  const char* s = text.c_str();
  PciAddress a;
  int end = 0;
  bool ok = std::sscanf(s, "%x:%x:%x.%x%n", &a.domain, &a.bus, &a.device, &a.function, &end) == 4 &&
            s[end] == '\0';
  if (!ok) {
    a = {};
    end = 0;
    ok = std::sscanf(s, "%x:%x:%x%n", &a.domain, &a.bus, &a.device, &end) == 3 && s[end] == '\0';
  }
  if (!ok) {
    a = {};
    end = 0;
    ok = std::sscanf(s, "%x:%x.%x%n", &a.bus, &a.device, &a.function, &end) == 3 && s[end] == '\0';
  }
  if (!ok || a.bus > 0xff || a.device > 0x1f || a.function > 7) return std::nullopt;
  return a;
}

std::string format_pci_bus_id(const PciAddress& a) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function);
  return buffer;
}

std::optional<std::string> nvlink_version_name(unsigned raw) {
  switch (raw) {
    case nvml::kNvLinkVersion1_0:
      return "1.0";
    case nvml::kNvLinkVersion2_0:
      return "2.0";
    case nvml::kNvLinkVersion2_2:
      return "2.2";
    case nvml::kNvLinkVersion3_0:
      return "3.0";
    case nvml::kNvLinkVersion3_1:
      return "3.1";
    case nvml::kNvLinkVersion4_0:
      return "4.0";
    case nvml::kNvLinkVersion5_0:
      return "5.0";
    case nvml::kNvLinkVersion6_0:
      return "6.0";
    default:
      return std::nullopt;
  }
}

std::optional<double> nvlink_table_gbps(unsigned raw) {
  // Nominal data rate per link per direction (P100 20; V100, A100, H100 25; B200 50 GB/s).
  switch (raw) {
    case nvml::kNvLinkVersion1_0:
      return 20.0;
    case nvml::kNvLinkVersion2_0:
    case nvml::kNvLinkVersion2_2:
    case nvml::kNvLinkVersion3_0:
    case nvml::kNvLinkVersion3_1:
    case nvml::kNvLinkVersion4_0:
      return 25.0;
    case nvml::kNvLinkVersion5_0:
      return 50.0;
    default:
      return std::nullopt;
  }
}

std::optional<std::string> pcie_path_class(int level) {
  switch (level) {
    case nvml::kTopologyInternal:
      return "same board";
    case nvml::kTopologySingle:
      return "PIX";
    case nvml::kTopologyMultiple:
      return "PXB";
    case nvml::kTopologyHostbridge:
      return "PHB";
    case nvml::kTopologyNode:
      return "NODE";
    case nvml::kTopologySystem:
      return "SYS";
    default:
      return std::nullopt;
  }
}

std::optional<double> pcie_lane_gbps(unsigned generation) {
  // GT/s x encoding efficiency / 8 bits: Gen1-2 8b/10b, Gen3-5 128b/130b, Gen6 FLIT (242/256).
  switch (generation) {
    case 1:
      return 0.25;
    case 2:
      return 0.5;
    case 3:
      return 0.985;
    case 4:
      return 1.969;
    case 5:
      return 3.938;
    case 6:
      return 7.563;
    default:
      return std::nullopt;
  }
}

}  // namespace p2pbench
