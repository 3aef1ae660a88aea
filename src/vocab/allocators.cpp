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

std::optional<Allocator> parse_allocator(const std::string& name) {
  for (Allocator a : {Allocator::kLegacy, Allocator::kVmm, Allocator::kFabric})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

const char* allocator_names_quoted() { return "\"legacy\", \"vmm\", \"fabric\""; }

}  // namespace p2pbench
