#include "plan/case_spec.hpp"

namespace p2pbench {

std::string CaseSpec::name() const {
  std::string n = std::string(to_string(method)) + "/" + to_string(direction) + "/" + to_string(mode);
  // Two-rank matrix cases keep their v1 names; other patterns name themselves and their flows.
  if (pattern != Pattern::kMatrix || (schedule && *schedule != Schedule::kSequential)) {
    n += std::string("/") + to_string(pattern);
    if (schedule) n += std::string(":") + to_string(*schedule);
    if (round) n += "/round:" + std::to_string(*round);
  }
  if (!flows.empty() && (mode == Mode::kUni || pattern != Pattern::kMatrix || flows.size() != 2 || flows[0].src_rank + flows[0].dst_rank != 1)) {
    std::string list;
    for (const Flow& f : flows) list += (list.empty() ? "" : ",") + std::to_string(f.src_rank) + "->" + std::to_string(f.dst_rank);
    n += "/" + list;
  }
  n += "/bytes:" + std::to_string(bytes);
  if (blocks) n += "/blocks:" + std::to_string(*blocks);
  if (threads) n += "/threads:" + std::to_string(*threads);
  if (unroll) n += "/unroll:" + std::to_string(*unroll);
  if (smem_bytes) n += "/smem:" + std::to_string(*smem_bytes);
  if (stages) n += "/stages:" + std::to_string(*stages);
  if (chunk_bytes) n += "/chunk:" + std::to_string(*chunk_bytes);
  if (chunks_in_flight) n += "/in_flight:" + std::to_string(*chunks_in_flight);
  if (routing_skew) n += "/skew:" + std::to_string(*routing_skew);
  if (tiles) n += "/tiles:" + std::to_string(*tiles);
  if (gemm_k) n += "/k:" + std::to_string(*gemm_k);
  // At their defaults (a signal per chunk, written) the names of the cases before these axes.
  if (signal_group && *signal_group != 1) n += "/group:" + std::to_string(*signal_group);
  if (signal_copy && *signal_copy != 0) n += "/signal:copy";
  if (copy_batch && *copy_batch != 0) n += "/copies:batch";
  if (protocol) n += "/protocol:" + *protocol;
  if (atomic_type) n += "/type:" + *atomic_type;
  if (atomic_pattern) n += "/pattern:" + *atomic_pattern;
  if (engine) n += std::string("/engine:") + to_string(*engine);  // interference
  if (workload) n += "/workload:" + *workload;
  if (sm_partition) n += "/partition:" + std::to_string(*sm_partition);
  if (both_gpus_busy && *both_gpus_busy) n += "/both_gpus_busy";
  if (load) n += std::string("/load:") + to_string(load->method) + ":" + to_string(load->pattern);
  // The defaults (pinned, local) keep the names cases had before the host axis.
  if (host_memory && *host_memory != HostMemoryKind::kPinned) n += std::string("/host:") + to_string(*host_memory);
  if (host_numa && *host_numa != NumaPlacement::kLocal) n += std::string("/numa:") + to_string(*host_numa);
  return n;
}


CaseSpec CaseSpec::load_case() const {
  CaseSpec c;
  if (!load) return c;
  c.method = load->method;
  c.direction = load->direction;
  c.bytes = load->bytes;
  c.flows = load->flows;
  c.pattern = load->pattern;
  static_cast<KernelShape&>(c) = *load;
  return c;
}

}  // namespace p2pbench
