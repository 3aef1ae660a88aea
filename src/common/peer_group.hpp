// What code below the driver needs from the other ranks of the job: who this rank is, how to
// trade bytes with every rank, and which ranks share its node. The baselines set up their
// session resources through it (the NCCL unique id, the staging area's name), so engines
// depend on this interface and never on the MPI layer (comm/Communicator implements it).
//
// A node is what the plan calls one: the ranks on one host, or, under the node override
// (--ranks-per-node K), each group of K consecutive ranks of a host. node_of() answers with the
// plan's view, not the machine's, so a baseline treats ranks of one host on different nodes as
// it would ranks on different hosts.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

class PeerGroup {
 public:
  virtual ~PeerGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Collective: every rank's bytes, indexed by rank. `timeout_s` (unscaled; nullopt: the
  // implementation's default) bounds the wait for the other ranks. Throws when a rank does not
  // arrive (comm/Communicator: PeerLost) and RuntimeFailure on transport errors.
  virtual std::vector<std::string> exchange(const std::string& mine, const char* what,
                                            std::optional<double> timeout_s = std::nullopt) const = 0;

  // The node index of `rank` (0, 1, ... in order of each node's lowest rank).
  virtual int node_of(int rank) const = 0;

  // A peer seen not running (exited, or stopped longer than the stale time), in words, or
  // nullopt while every peer that can be seen from here runs. For waits outside the group's own
  // exchanges (NCCL's), so that they end when a peer is gone rather than at their deadline.
  virtual std::optional<std::string> peer_not_running() const { return std::nullopt; }

  // Collective: returns once every rank has arrived.
  void barrier(const char* what, std::optional<double> timeout_s = std::nullopt) const {
    exchange(std::string(), what, timeout_s);
  }
  // Collective: root's bytes end up in `bytes` on every rank.
  void broadcast(std::string& bytes, int root, const char* what, std::optional<double> timeout_s = std::nullopt) const {
    std::vector<std::string> all = exchange(rank() == root ? bytes : std::string(), what, timeout_s);
    bytes = std::move(all.at(size_t(root)));
  }

  // The ranks on this rank's node, ascending (this rank among them).
  std::vector<int> node_ranks() const {
    std::vector<int> ranks;
    const int mine = node_of(rank());
    for (int r = 0; r < size(); ++r)
      if (node_of(r) == mine) ranks.push_back(r);
    return ranks;
  }
  bool same_node(int a, int b) const { return node_of(a) == node_of(b); }
};

}  // namespace p2pbench
