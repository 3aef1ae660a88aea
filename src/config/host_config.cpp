#include "config/host_config.hpp"

#include <algorithm>
#include <optional>

#include "common/errors.hpp"

namespace p2pbench {

using json = nlohmann::json;

namespace {

// A list of names of one vocabulary, each at most once (a repeated kind would run twice under
// one identity).
template <typename E>
std::vector<E> parse_unique_list(const json& v, const std::string& key, const KeyNamer& name,
                                 const std::vector<std::string>& allowed, std::optional<E> (*parse)(const std::string&)) {
  std::vector<std::string> names;
  try {
    names = parse_name_list(v, key, allowed);
  } catch (const InputError& e) {
    throw InputError(name(e.key()) + std::string(e.what()).substr(e.key().size()));
  }
  std::vector<E> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const E value = *parse(names[i]);
    if (std::find(out.begin(), out.end(), value) != out.end())
      throw InputError(name(key + "[" + std::to_string(i) + "]"), "\"" + names[i] + "\"", "listed twice");
    out.push_back(value);
  }
  return out;
}

}  // namespace

void parse_host_section(const json& section, const KeyNamer& name, HostSettings& out) {
  reject_unknown_keys(section, {"memory", "numa"}, "host.", name);
  if (section.contains("memory"))
    out.memory = parse_unique_list<HostMemoryKind>(section["memory"], "host.memory", name, host_memory_kind_names(),
                                                   parse_host_memory_kind);
  if (section.contains("numa"))
    out.numa = parse_unique_list<NumaPlacement>(section["numa"], "host.numa", name, numa_placement_names(),
                                                parse_numa_placement);
}

json HostSettings::to_json() const {
  json kinds = json::array(), placements = json::array();
  for (HostMemoryKind k : memory) kinds.push_back(to_string(k));
  for (NumaPlacement p : numa) placements.push_back(to_string(p));
  return {{"memory", kinds}, {"numa", placements}};
}

}  // namespace p2pbench
