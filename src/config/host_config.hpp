// The "host" section of the config: the host memory kinds and NUMA placements the host-link
// methods sweep ({"memory": [...], "numa": [...]}; docs/host-memory.md). The defaults (pinned,
// local) are the one case per size that a config without the section always had.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "config/config_keys.hpp"
#include "vocab/host_memory_kinds.hpp"

namespace p2pbench {

struct HostSettings {
  std::vector<HostMemoryKind> memory{HostMemoryKind::kPinned};
  std::vector<NumaPlacement> numa{NumaPlacement::kLocal};

  nlohmann::json to_json() const;
};

// Reads the "host" section into `out`. Throws InputError naming the key ("host.memory[1]") and
// the value: an unknown key or name, an empty or repeated list.
void parse_host_section(const nlohmann::json& section, const KeyNamer& name, HostSettings& out);

}  // namespace p2pbench
