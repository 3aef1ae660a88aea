// Binds the calling process to the CPUs nearest its GPU (the GPU's NUMA node, from sysfs).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace p2pbench {

// Returns what was done, for the results: {"policy", "cpus", "numa_node", "inherited_cpus",
// "reason"}. With enabled=false, or where the GPU's locality is unknown, nothing changes.
nlohmann::json bind_near_gpu(const std::string& pci_bus_id, bool enabled);

// "0-3,8" for the CPUs in the calling thread's affinity mask.
std::string current_cpu_list();

}  // namespace p2pbench
