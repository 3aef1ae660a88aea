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
  // Each axis set, as its table row names it (at the value every case ran at before the axis,
  // left out: those cases keep their names).
  for (ShapeAxis a : kShapeAxes) {
    const ShapeAxisInfo& axis = shape_axis_info(a);
    const std::optional<uint64_t> value = axis_value(a);
    if (!value || value == axis.value_before_axis) continue;
    n += std::string("/") + axis.name_key + ":" + (axis.name_word ? axis.name_word : std::to_string(*value));
  }
  if (protocol) n += "/protocol:" + *protocol;
  if (atomic_type) n += "/type:" + *atomic_type;
  if (atomic_pattern) n += "/pattern:" + *atomic_pattern;
  if (engine) n += std::string("/engine:") + to_string(*engine);  // interference
  if (workload) n += "/workload:" + *workload;
  if (sm_partition) n += "/partition:" + std::to_string(*sm_partition);
  if (both_gpus_busy && *both_gpus_busy) n += "/both_gpus_busy";
  if (transfer_high_priority && *transfer_high_priority) n += "/transfer_priority:highest";
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
