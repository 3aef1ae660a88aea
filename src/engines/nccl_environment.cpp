#include "engines/nccl_environment.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/errors.hpp"

namespace p2pbench {

// NCCL_HOSTID, from NCCL's source (src/misc/utils.cc, read there since NCCL 2.5.6; we found no
// entry for it in NCCL's environment-variable documentation): the host hash is "a hash of the
// unique identifying string for this host ... $(hostname)$(cat /proc/sys/kernel/random/boot_id).
// This string can be overridden by using the NCCL_HOSTID env var", computed once per process
// (getHostHashOnce() under std::call_once in 2.28.9). Ranks whose host hashes differ are
// different nodes to NCCL: init.cc counts nNodes by it, and graph/paths.cc rules P2P out between
// them ("Rule out different nodes / isolated containers": info1->hostHash != info2->hostHash),
// so their traffic takes the network transport (sockets over NCCL_SOCKET_IFNAME when there is
// no InfiniBand). On a two-H200 host with NCCL 2.28.3, two ranks given different NCCL_HOSTID
// values logged "nNodes 2" and connected "via NET/Socket" over lo instead of NVLink. Setups
// that emulate several hosts on one machine use it the same way, one value per emulated host.
// A side effect: two ranks on one GPU are NCCL's "Duplicate GPU" error (init.cc, 2.28) only
// when their host hashes agree, so under the override they may share a GPU across nodes, not
// within one.

bool NcclPlacement::host_split(int r) const {
  const std::string& host = host_of_rank.at(size_t(r));
  for (size_t other = 0; other < host_of_rank.size(); ++other)
    if (host_of_rank[other] == host && node_of_rank.at(other) != node_of_rank.at(size_t(r))) return true;
  return false;
}

bool NcclPlacement::one_host() const {
  for (const std::string& host : host_of_rank)
    if (host != host_of_rank.front()) return false;
  return true;
}

std::optional<std::string> shared_gpu_reason(const NcclPlacement& p, const std::vector<std::string>& gpu_of_rank) {
  if (gpu_of_rank.size() != p.node_of_rank.size())
    throw std::invalid_argument("the NCCL placement names " + std::to_string(p.node_of_rank.size()) + " nodes and " +
                                std::to_string(gpu_of_rank.size()) + " GPUs");
  for (size_t a = 0; a < gpu_of_rank.size(); ++a)
    for (size_t b = a + 1; b < gpu_of_rank.size(); ++b)
      if (gpu_of_rank[a] == gpu_of_rank[b] && p.node_of_rank[a] == p.node_of_rank[b])
        return "NCCL takes one GPU per rank: ranks " + std::to_string(a) + " and " + std::to_string(b) + " share GPU " +
               gpu_of_rank[a] + " (NCCL would refuse it: \"Duplicate GPU detected\")";
  return std::nullopt;
}

NcclEnvironment decide_nccl_environment(const NcclPlacement& p,
                                        const std::function<const char*(const char*)>& lookup) {
  if (p.host_of_rank.size() != p.node_of_rank.size() || p.rank < 0 || size_t(p.rank) >= p.host_of_rank.size())
    throw std::invalid_argument("the NCCL placement names " + std::to_string(p.host_of_rank.size()) + " hosts and " +
                                std::to_string(p.node_of_rank.size()) + " nodes for rank " + std::to_string(p.rank));
  std::map<std::string, std::string> wanted{{"NCCL_NVLS_ENABLE", "0"}};
  if (p.one_host()) wanted["NCCL_SOCKET_IFNAME"] = "lo";
  if (p.host_split(p.rank))
    wanted["NCCL_HOSTID"] = p.host_of_rank[size_t(p.rank)] + ":p2pbench-node" +
                            std::to_string(p.node_of_rank[size_t(p.rank)]);
  NcclEnvironment env;
  for (const auto& [name, value] : wanted) {
    if (const char* users = lookup(name.c_str()))
      env.from_user[name] = users;
    else
      env.set[name] = value;
  }
  return env;
}

void apply_nccl_environment(const NcclEnvironment& env) {
  for (const auto& [name, value] : env.set)
    if (setenv(name.c_str(), value.c_str(), 0) != 0)
      throw RuntimeFailure("setting " + name + " for NCCL: " + std::strerror(errno));
}

std::string local_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    throw RuntimeFailure(std::string("reading this host's name for NCCL: ") + std::strerror(errno));
  return name;
}

}  // namespace p2pbench
