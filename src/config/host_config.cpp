#include "config/host_config.hpp"

#include "common/errors.hpp"

namespace p2pbench {

using json = nlohmann::json;

void parse_host_section(const json& section, const KeyNamer& name, HostSettings& out) {
  reject_unknown_keys(section, {"memory", "numa"}, "host.", name);
  if (section.contains("memory"))
    out.memory = parse_name_list<HostMemoryKind>(section["memory"], "host.memory", name, host_memory_kind_names(),
                                                 parse_host_memory_kind);
  if (section.contains("numa"))
    out.numa = parse_name_list<NumaPlacement>(section["numa"], "host.numa", name, numa_placement_names(),
                                              parse_numa_placement);
}

json HostSettings::to_json() const {
  json kinds = json::array(), placements = json::array();
  for (HostMemoryKind k : memory) kinds.push_back(to_string(k));
  for (NumaPlacement p : numa) placements.push_back(to_string(p));
  return {{"memory", kinds}, {"numa", placements}};
}

}  // namespace p2pbench
