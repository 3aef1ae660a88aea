// What the `nccl` baseline sets in NCCL's environment before its communicator opens, decided
// from where the ranks are. NCCL reads these variables once per process, so they are set before
// the first NCCL call and never changed afterwards. A variable the user has set is never
// overridden; the decision records it instead, so the results can say what NCCL ran with.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

// Where the ranks of the job are: the host name of each rank (gethostname(), the name NCCL
// itself derives its host identity from) and the plan's node of each rank (node override
// included).
struct NcclPlacement {
  int rank = 0;
  std::vector<std::string> host_of_rank;
  std::vector<int> node_of_rank;

  // Whether `rank`'s host holds ranks of more than one node (the node override splits it).
  bool host_split(int rank) const;
  // Whether every rank runs on one host.
  bool one_host() const;
};

struct NcclEnvironment {
  std::map<std::string, std::string> set;        // NAME -> value this rank set
  std::map<std::string, std::string> from_user;  // NAME -> the user's value, where it was kept

  bool empty() const { return set.empty() && from_user.empty(); }
};

// The decision, from the placement and the current environment (`lookup` returns a variable's
// value or nullptr, as std::getenv):
//   NCCL_NVLS_ENABLE=0     always: NVLink multicast stays off on these machines.
//   NCCL_SOCKET_IFNAME=lo  when every rank is on one host: NCCL bootstraps (and, across nodes
//                          of the override, moves data) over sockets, and such a host may have
//                          no other interface up. Across real hosts NCCL picks the interface.
//   NCCL_HOSTID=<host>:p2pbench-node<n>
//                          when the node override splits this rank's host: NCCL then takes each
//                          node for a host of its own and connects them through its network
//                          transport instead of P2P or shared memory (see nccl_environment.cpp).
NcclEnvironment decide_nccl_environment(const NcclPlacement& placement,
                                        const std::function<const char*(const char*)>& lookup);

// Why NCCL cannot open one communicator over these ranks, or nullopt: NCCL takes one GPU per
// rank within a node and refuses a second rank on a GPU ("Duplicate GPU detected"), a refusal
// that reaches only the ranks sharing it, while the others wait in the communicator's set-up
// until the job's deadline. `gpu_of_rank`: each rank's GPU (its PCI bus id); ranks of different
// nodes of the placement may share one (NCCL_HOSTID makes them different hosts to NCCL).
std::optional<std::string> shared_gpu_reason(const NcclPlacement& placement, const std::vector<std::string>& gpu_of_rank);

// Sets `env.set` in this process's environment (never overwriting). Throws RuntimeFailure.
void apply_nccl_environment(const NcclEnvironment& env);

// This host's name as gethostname() gives it. Throws RuntimeFailure.
std::string local_host_name();

}  // namespace p2pbench
