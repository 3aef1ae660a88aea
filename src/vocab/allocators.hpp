// How a run allocates its transfer buffers and maps its peers' (the config key "allocator",
// --allocator; docs/allocators.md). One choice per run: the buffers are mapped once.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

enum class Allocator {
  kLegacy,  // cudaMalloc, shared through CUDA IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle)
  kVmm,     // cuMemCreate, shared as a POSIX file descriptor taken with pidfd_getfd
  kFabric,  // cuMemCreate, shared as a fabric handle (needs an IMEX channel)
};

// "legacy", "vmm", "fabric".
const char* to_string(Allocator a);
std::optional<Allocator> parse_allocator(const std::string& name);
// "legacy", "vmm", "fabric": what an error of a wrong name lists.
std::vector<std::string> allocator_names();

}  // namespace p2pbench
