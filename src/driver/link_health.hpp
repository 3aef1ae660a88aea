// What the run knows about the link between the two GPUs (NVML, loaded at run time): the
// pair's topology and theoretical peak, and the health snapshots before and after the sweep.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "topology/health.hpp"
#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"

namespace p2pbench {

class LinkHealth {
 public:
  // `gpus`: the two ranks' GPU descriptions (pci_bus_id, uuid). Never throws: where NVML is
  // missing or a query fails, the reason is recorded instead.
  explicit LinkHealth(const std::vector<nlohmann::json>& gpus);

  std::optional<double> peak_gbps_per_direction() const { return peak_; }
  // Adds topology, health_before, health_after and health_delta to `meta`.
  void finish(nlohmann::json& meta);
  // What is known before the sweep: {"topology", "health_before"}.
  nlohmann::json start_meta() const { return {{"topology", topology_}, {"health_before", before_}}; }

 private:
  std::optional<NvmlLibrary> lib_;
  std::vector<GpuIdentity> ids_;
  nlohmann::json topology_, before_;
  std::optional<double> peak_;
};

}  // namespace p2pbench
