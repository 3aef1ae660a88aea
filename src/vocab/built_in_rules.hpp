// The built-in methods' own rules that have no folder of their own yet: the TMA kernel's shapes,
// the staged ring's flows, and what they need that only a run can check. The registry
// (vocab/methods.cpp) declares them with their methods; the core asks the registry.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vocab/flows.hpp"
#include "vocab/kernel_shape.hpp"

namespace p2pbench {

// The TMA kernel: smem_bytes plus one mbarrier per stage within the shared memory any GPU with
// bulk copies gives one block (the GPU's own figure is checked at run time).
std::optional<std::string> tma_shared_memory_limit(const KernelShape& shape);
// The TMA kernel: each stage a whole multiple of 16 bytes (bulk copies move 16-byte multiples).
std::optional<std::string> tma_stage_bytes(const KernelShape& shape);
inline constexpr const char* kTmaGpuNeed =
    "tma: compute capability 9.0 or later, and smem_bytes plus mbarriers within the GPU's shared memory per block";

// The staged ring: its staging area holds one region per sending rank, so one flow out and one in
// per rank.
std::optional<std::string> staged_ring_overlap(const std::vector<Flow>& flows);
// The staged baseline's and the host link's: pinned host buffers (and the staging area's /dev/shm).
inline constexpr const char* kPinnedHostNeed =
    "host memory: pinned buffers and /dev/shm space for the staged baseline and the host link";

}  // namespace p2pbench
