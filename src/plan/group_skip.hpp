// What a group's layout rules out for a case, known from the plan alone.
#pragma once

#include <optional>
#include <string>

#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// Why `c` cannot run on `layout`, or nullopt:
//   - every method but nccl maps the peer's memory through CUDA IPC (the staged baseline shares
//     pinned host memory), which exists only within a node: a flow across nodes gives
//     "rank a and rank b are on different nodes: no CUDA IPC path (nccl runs it)"; where the
//     two share an NVLink domain across hosts (layout.domain_of_rank, a fabric clique) the
//     methods that map the peer's memory run with fabric handles (layout.fabric_memory), else
//     "ranks a and b share NVLink domain <name> across hosts: run with --allocator fabric";
//   - the method's own rule for flows at once (MethodInfo::flows_skip; staged: a rank that sends,
//     or receives, more than one flow at once, its staging area holding one region per sending rank);
//   - a flow naming a rank the group does not have.
std::optional<std::string> group_skip_reason(const CaseSpec& c, const GroupLayout& layout);

}  // namespace p2pbench
