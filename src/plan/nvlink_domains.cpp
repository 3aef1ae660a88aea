#include "plan/nvlink_domains.hpp"

#include <map>
#include <stdexcept>
#include <utility>

namespace p2pbench {

std::vector<DomainDecision> assign_nvlink_domains(GroupLayout& layout, const std::vector<GpuFabric>& fabric) {
  if (fabric.size() != size_t(layout.size()) || layout.node_of_rank.size() != fabric.size())
    throw std::invalid_argument("fabric information for " + std::to_string(fabric.size()) + " ranks in a group of " +
                                std::to_string(layout.size()));
  // A domain's key: "fabric" + cluster + clique, or "host" + node: the two never collide.
  std::map<std::pair<std::string, std::string>, int> index;
  std::vector<DomainDecision> decisions;
  layout.domain_of_rank.clear();
  layout.domain_names.clear();
  for (int r = 0; r < layout.size(); ++r) {
    const GpuFabric& f = fabric[size_t(r)];
    const std::string why_not = no_fabric_domain_reason(f);
    DomainDecision d;
    std::pair<std::string, std::string> key;
    std::string name;
    if (why_not.empty()) {
      key = {"fabric", f.cluster_uuid + "/" + std::to_string(f.clique_id)};
      name = fabric_domain_name(f);
      d.decided_by = "fabric";
      d.why = "fabric registration completed: " + name;
    } else {
      const int node = layout.node_of_rank[size_t(r)];
      key = {"host", std::to_string(node)};
      name = "node " + std::to_string(node);
      d.decided_by = "host";
      d.why = why_not + ": the domain is the rank's node";
    }
    const auto it = index.emplace(key, int(index.size())).first;
    if (size_t(it->second) == layout.domain_names.size()) layout.domain_names.push_back(name);
    d.domain = it->second;
    layout.domain_of_rank.push_back(d.domain);
    decisions.push_back(d);
  }
  return decisions;
}

nlohmann::json nvlink_domains_meta(const GroupLayout& layout, const std::vector<DomainDecision>& decisions,
                                   const std::vector<GpuFabric>& fabric) {
  nlohmann::json domains = nlohmann::json::array(), by_rank = nlohmann::json::array();
  for (size_t d = 0; d < layout.domain_names.size(); ++d) {
    std::vector<int> ranks;
    for (int r = 0; r < layout.size(); ++r)
      if (layout.domain_of(r) == int(d)) ranks.push_back(r);
    domains.push_back({{"name", layout.domain_names[d]}, {"ranks", ranks}});
  }
  for (size_t r = 0; r < decisions.size(); ++r)
    by_rank.push_back({{"domain", decisions[r].domain},
                       {"decided_by", decisions[r].decided_by},
                       {"why", decisions[r].why},
                       {"fabric", r < fabric.size() ? nlohmann::json(fabric[r]) : nlohmann::json()}});
  return {{"domain_of_rank", layout.domain_of_rank}, {"domains", domains}, {"by_rank", by_rank}};
}

}  // namespace p2pbench
