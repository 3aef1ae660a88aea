// Who takes part in a run: the ranks, the GPU each one uses and the node each one is on. The
// plan of cases is made from it (same-GPU pairs are marked, cross-node pairs have no IPC path),
// so every rank must build it identically: from identities all ranks exchanged at set-up, or,
// for --dry-run, from --ranks alone (one GPU per rank, one node).
#pragma once

#include <string>
#include <vector>

namespace p2pbench {

struct GroupLayout {
  std::vector<std::string> gpu_of_rank;  // a GPU identity (UUID) per rank
  std::vector<int> node_of_rank;         // a node index per rank (0, 1, ... in rank order)
  // Every rank is an MPS client: ranks that share a GPU run on it at once, not by turns, and
  // green-context SM partitions are not kept.
  bool all_mps_clients = false;
  // The NVLink domain of each rank (plan/nvlink_domains.hpp): a fabric clique that may span
  // hosts, else the rank's node. Empty: each node is its own domain (the dry run, layouts made
  // by hand).
  std::vector<int> domain_of_rank;
  std::vector<std::string> domain_names;  // per domain: "clique 7 of cluster <uuid>", "node 1"
  // The run's allocator exports fabric handles (--allocator fabric): ranks of one domain on
  // different nodes can map each other's memory.
  bool fabric_memory = false;

  int size() const { return int(gpu_of_rank.size()); }
  bool same_device(int a, int b) const { return gpu_of_rank.at(size_t(a)) == gpu_of_rank.at(size_t(b)); }
  bool same_node(int a, int b) const { return node_of_rank.at(size_t(a)) == node_of_rank.at(size_t(b)); }
  int domain_of(int r) const { return domain_of_rank.empty() ? node_of_rank.at(size_t(r)) : domain_of_rank.at(size_t(r)); }
  bool same_domain(int a, int b) const { return domain_of(a) == domain_of(b); }
  std::string domain_name(int r) const;
  // The ranks of each node, nodes in order of their lowest rank.
  std::vector<std::vector<int>> nodes() const;
  // Distinct GPUs, in order of their lowest rank.
  std::vector<std::string> gpus() const;

  // `ranks` ranks, each on its own GPU ("gpu0", "gpu1", ...), all on one node: the dry run's view.
  static GroupLayout distinct(int ranks);
  // From every rank's GPU identity and host name; `ranks_per_node` > 0 (the node override)
  // splits each host's ranks into nodes of that many consecutive ranks.
  static GroupLayout from_identities(const std::vector<std::string>& gpus, const std::vector<std::string>& hosts,
                                     int ranks_per_node = 0);
};

}  // namespace p2pbench
