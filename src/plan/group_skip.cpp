#include "plan/group_skip.hpp"

#include <algorithm>

namespace p2pbench {

namespace {

// A flow between two nodes has no CUDA IPC path. Within one NVLink domain (a fabric clique that
// spans hosts) the methods that map the peer's memory reach it through fabric handles instead.
std::optional<std::string> cross_node_reason(Method method, const Flow& f, const GroupLayout& layout) {
  const int a = f.src_rank, b = f.dst_rank;
  if (layout.same_node(a, b)) return std::nullopt;
  const std::string pair = std::to_string(std::min(a, b)) + " and " + std::to_string(std::max(a, b));
  if (layout.same_domain(a, b) && !layout.domain_of_rank.empty() && needs_peer_mapping(method)) {
    if (layout.fabric_memory) return std::nullopt;
    return "ranks " + pair + " share NVLink domain " + layout.domain_name(a) +
           " across hosts: run with --allocator fabric (CUDA IPC does not cross hosts; fabric handles do)";
  }
  std::string where = "are on different nodes (hosts, or PID namespaces of one host, which CUDA IPC cannot cross)";
  if (!layout.domain_of_rank.empty() && !layout.same_domain(a, b))
    where += " and in different NVLink domains (" + layout.domain_name(a) + ", " + layout.domain_name(b) + ")";
  return "rank " + std::to_string(a) + " and rank " + std::to_string(b) + " " + where + ": no CUDA IPC path (" +
         method_list([](const MethodInfo& m) { return m.crosses_nodes; }) + " runs it)";
}

}  // namespace

std::optional<std::string> group_skip_reason(const CaseSpec& c, const GroupLayout& layout) {
  for (const Flow& f : c.flows)
    for (int r : {f.src_rank, f.dst_rank})
      if (r < 0 || r >= layout.size())
        return "rank " + std::to_string(r) + " is not in the group of " + std::to_string(layout.size()) + " ranks";
  if (!method_info(c.method).crosses_nodes)
    for (const Flow& f : c.flows)
      if (auto why = cross_node_reason(c.method, f, layout)) return why;
  if (const auto flows_skip = method_info(c.method).flows_skip)  // the method's own rule for flows at once
    if (auto why = flows_skip(c.flows)) return why;
  if (is_interference(c.method) && c.sm_partition.value_or(0) > 0 && layout.all_mps_clients)
    return "green-context SM partitions are not kept under MPS (blocks of both groups share SMs): run "
           "interference without the MPS daemon";
  // Two processes on one GPU take turns on it (no MPS): kernels that wait for each other (the
  // ping-pong; a chase beside a spinning owner) would wait until their timeout.
  const bool needs_both_running = method_info(c.method).needs_both_ends_running ||
                                  (c.read_chase && c.read_chase->owner == "busy");
  if (needs_both_running && !layout.all_mps_clients)
    for (const Flow& f : c.flows)
      if (f.src_rank != f.dst_rank && layout.same_device(f.src_rank, f.dst_rank))
        return "ranks " + std::to_string(f.src_rank) + " and " + std::to_string(f.dst_rank) +
               " share one GPU, where the two ends of this method cannot run at once (processes take turns on a GPU "
               "without MPS: start the MPS daemon, nvidia-cuda-mps-control -d)";
  return std::nullopt;
}

}  // namespace p2pbench
