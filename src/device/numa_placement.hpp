// Which NUMA node a host-link case's buffer goes to ("host": {"numa": ["local", "remote"]}):
// the topology read from sysfs, and the choice made from it (pure, so tests give it fake nodes).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vocab/host_memory_kinds.hpp"

namespace p2pbench {

struct NumaTopology {
  // Nodes with both CPUs and memory, ascending: where a host buffer can sensibly live (a GPU's
  // or a CXL expander's memory node has no CPUs and is not "the host").
  std::vector<int> nodes;
  std::optional<int> gpu_node;  // the GPU's PCI device's node (nullopt: sysfs says -1 or nothing)
  std::optional<int> cpu_node;  // the node of the CPU the rank runs on (its binding)
};

// The node to bind to, or why the case cannot run here (skip).
struct NumaChoice {
  std::optional<int> node;
  std::string skip;  // empty when node is set
};

// local: the GPU's node, else the rank's CPU's node, else the only node; remote: the lowest
// other node (skipped where the host has one).
NumaChoice choose_numa_node(NumaPlacement want, const NumaTopology& topology);

// "0-1,3" (sysfs node lists) -> {0, 1, 3}; malformed parts are ignored.
std::vector<int> parse_node_list(const std::string& text);

// The host's topology for the GPU at `pci_bus_id` ("0000:1B:00.0", as cudaDeviceGetPCIBusId
// writes it). A kernel without NUMA (no /sys/devices/system/node) reads as one node 0.
NumaTopology read_numa_topology(const std::string& pci_bus_id);

}  // namespace p2pbench
