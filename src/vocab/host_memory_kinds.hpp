// How a host-link case's host buffer is allocated and where it lives (the config's "host"
// section; docs/host-memory.md). Each kind is a different path the host's memory takes to the
// copy engine, so each is a case of its own.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

enum class HostMemoryKind {
  kPinned,      // cudaHostAlloc(mapped | portable): the driver's pinned pages (the default)
  kRegistered,  // anonymous 4 KiB pages pinned afterwards with cudaHostRegister(mapped | portable)
  kHugePages,   // 2 MiB pages (hugetlbfs where reserved, else transparent), then cudaHostRegister
  kPageable,    // anonymous 4 KiB pages never registered: the driver stages every copy
};

// Which NUMA node of the host the buffer is bound to, seen from the case's GPU.
enum class NumaPlacement {
  kLocal,   // the node nearest the GPU (its PCI device's numa_node, else the rank's CPU's node)
  kRemote,  // another node with CPUs and memory
};

const char* to_string(HostMemoryKind k);
const char* to_string(NumaPlacement p);
std::optional<HostMemoryKind> parse_host_memory_kind(const std::string& name);
std::optional<NumaPlacement> parse_numa_placement(const std::string& name);
// Every name, in declaration order (the config's allowed values).
std::vector<std::string> host_memory_kind_names();
std::vector<std::string> numa_placement_names();

}  // namespace p2pbench
