// Which ranks share an NVLink domain: GPUs that completed their fabric registration under one
// cluster UUID and clique id (a multi-node NVLink system, GB200 NVL72: several hosts), else the
// rank's node (its host: the GPUs NVLink joins within one machine). The way NVIDIA's nvloom and
// NCCL group GPUs. What a pair can then use: within a node CUDA IPC; across nodes of one domain
// memory exported as fabric handles (--allocator fabric); across domains only what crosses
// nodes (nccl).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/gpu_fabric.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// How one rank's domain was decided.
struct DomainDecision {
  int domain = 0;
  std::string decided_by;  // "fabric" or "host"
  std::string why;         // "fabric registration completed: clique 7 of cluster ..." or why not
};

// Sets layout.domain_of_rank and layout.domain_names from each rank's fabric information (one per
// rank, layout.node_of_rank already set) and returns how each rank's domain was decided. Domains
// are numbered in order of their lowest rank. Throws std::invalid_argument on a list of the wrong
// length.
std::vector<DomainDecision> assign_nvlink_domains(GroupLayout& layout, const std::vector<GpuFabric>& fabric);

// meta.group.nvlink_domains: {"domain_of_rank": [...], "domains": [{"name", "ranks"}...],
// "by_rank": [{"domain", "decided_by", "why", "fabric": {...}}...]}.
nlohmann::json nvlink_domains_meta(const GroupLayout& layout, const std::vector<DomainDecision>& decisions,
                                   const std::vector<GpuFabric>& fabric);

}  // namespace p2pbench
