// What the run knows about the links between the ranks' GPUs (NVML, loaded at run time): each
// pair's topology and theoretical peak, and the health snapshots before and after the sweep.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "plan/group_layout.hpp"
#include "topology/health.hpp"
#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"

namespace p2pbench {

class LinkHealth {
 public:
  // `gpus`: every rank's GPU description (pci_bus_id, uuid). Never throws: where NVML is
  // missing or a query fails, the reason is recorded instead.
  LinkHealth(const std::vector<nlohmann::json>& gpus, const GroupLayout& layout);

  // meta.pairs: one entry per ordered pair of ranks (src_rank, dst_rank, same_device,
  // same_node, link_type, topo_label, nvlink_links, peak_gbps_per_direction).
  const nlohmann::json& pairs() const { return pairs_; }
  // Adds topology, health_before, health_after and health_delta to `meta`.
  void finish(nlohmann::json& meta);
  // A health snapshot now (a burn-in window's end), or the unavailable record without NVML.
  nlohmann::json snapshot() const;
  // What is known before the sweep: {"topology", "health_before"}.
  nlohmann::json start_meta() const { return {{"topology", topology_}, {"health_before", before_}}; }

 private:
  std::optional<NvmlLibrary> lib_;
  void describe_pairs(const std::vector<GpuIdentity>& by_rank, const GroupLayout& layout);

  std::vector<GpuIdentity> ids_;  // distinct GPUs
  nlohmann::json topology_, before_, pairs_ = nlohmann::json::array();
};

// The [src][dst] peak matrix of meta.pairs for `ranks` ranks (none where unknown).
std::vector<std::vector<std::optional<double>>> peaks_of_pairs(const nlohmann::json& pairs, int ranks);

}  // namespace p2pbench
