#include "vocab/allocators.hpp"

namespace p2pbench {

const char* to_string(Allocator a) {
  switch (a) {
    case Allocator::kLegacy: return "legacy";
    case Allocator::kVmm: return "vmm";
    case Allocator::kFabric: return "fabric";
  }
  return "?";
}

namespace {
constexpr Allocator kAllocators[] = {Allocator::kLegacy, Allocator::kVmm, Allocator::kFabric};
}  // namespace

std::optional<Allocator> parse_allocator(const std::string& name) {
  for (Allocator a : kAllocators)
    if (name == to_string(a)) return a;
  return std::nullopt;
}

std::vector<std::string> allocator_names() {
  std::vector<std::string> names;
  for (Allocator a : kAllocators) names.push_back(to_string(a));
  return names;
}

}  // namespace p2pbench
