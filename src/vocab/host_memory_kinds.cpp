#include "vocab/host_memory_kinds.hpp"

namespace p2pbench {

namespace {
constexpr HostMemoryKind kKinds[] = {HostMemoryKind::kPinned, HostMemoryKind::kRegistered, HostMemoryKind::kHugePages,
                                     HostMemoryKind::kPageable};
constexpr NumaPlacement kPlacements[] = {NumaPlacement::kLocal, NumaPlacement::kRemote};
}  // namespace

const char* to_string(HostMemoryKind k) {
  switch (k) {
    case HostMemoryKind::kPinned: return "pinned";
    case HostMemoryKind::kRegistered: return "registered";
    case HostMemoryKind::kHugePages: return "huge_pages";
    case HostMemoryKind::kPageable: return "pageable";
  }
  return "?";
}

const char* to_string(NumaPlacement p) { return p == NumaPlacement::kLocal ? "local" : "remote"; }

std::optional<HostMemoryKind> parse_host_memory_kind(const std::string& name) {
  for (HostMemoryKind k : kKinds)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::optional<NumaPlacement> parse_numa_placement(const std::string& name) {
  for (NumaPlacement p : kPlacements)
    if (name == to_string(p)) return p;
  return std::nullopt;
}

std::vector<std::string> host_memory_kind_names() {
  std::vector<std::string> out;
  for (HostMemoryKind k : kKinds) out.push_back(to_string(k));
  return out;
}

std::vector<std::string> numa_placement_names() {
  std::vector<std::string> out;
  for (NumaPlacement p : kPlacements) out.push_back(to_string(p));
  return out;
}

}  // namespace p2pbench
