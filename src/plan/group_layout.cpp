#include "plan/group_layout.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace p2pbench {

std::vector<std::vector<int>> GroupLayout::nodes() const {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < size(); ++r) {
    const size_t node = size_t(node_of_rank[size_t(r)]);
    if (out.size() <= node) out.resize(node + 1);
    out[node].push_back(r);
  }
  return out;
}

std::string GroupLayout::domain_name(int r) const {
  const size_t d = size_t(domain_of(r));
  return d < domain_names.size() ? domain_names[d] : "node " + std::to_string(node_of_rank.at(size_t(r)));
}

std::vector<std::string> GroupLayout::gpus() const {
  std::vector<std::string> out;
  for (const std::string& g : gpu_of_rank)
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

GroupLayout GroupLayout::distinct(int ranks) {
  GroupLayout l;
  for (int r = 0; r < ranks; ++r) {
    l.gpu_of_rank.push_back("gpu" + std::to_string(r));
    l.node_of_rank.push_back(0);
  }
  return l;
}

GroupLayout GroupLayout::from_identities(const std::vector<std::string>& gpus, const std::vector<std::string>& hosts,
                                         int ranks_per_node) {
  GroupLayout l;
  l.gpu_of_rank = gpus;
  // A node is (host, the rank's index among that host's ranks / ranks_per_node); numbered in
  // order of first appearance.
  std::map<std::string, int> seen_on_host;
  std::map<std::pair<std::string, int>, int> index;
  for (const std::string& host : hosts) {
    const int local = seen_on_host[host]++;
    const auto key = std::make_pair(host, ranks_per_node > 0 ? local / ranks_per_node : 0);
    const auto it = index.emplace(key, int(index.size())).first;
    l.node_of_rank.push_back(it->second);
  }
  return l;
}

}  // namespace p2pbench
