#include "config/config_keys.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"
#include "common/text_format.hpp"

namespace p2pbench {

using json = nlohmann::json;

void reject_unknown_keys(const json& section, const std::set<std::string>& known, const std::string& prefix,
                         const KeyNamer& name) {
  if (!section.is_object()) throw InputError(name(prefix.substr(0, prefix.size() - 1)), section.dump(), "must be an object");
  for (auto it = section.begin(); it != section.end(); ++it) {
    if (known.count(it.key())) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw InputError(name(prefix + it.key()), it.value().dump(), "unknown key (known keys: " + list + ")");
  }
}

std::vector<std::string> parse_name_list(const json& v, const std::string& key, const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
  if (!v.is_array() || v.empty()) throw InputError(key, v.dump(), "expected a non-empty list of " + list);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || std::find(allowed.begin(), allowed.end(), v[i].get<std::string>()) == allowed.end())
      throw InputError(key + "[" + std::to_string(i) + "]", v[i].dump(), "expected one of " + list);
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

double parse_number_in(const json& v, const std::string& key, double low, double high, bool low_open) {
  const bool in_range = v.is_number() && std::isfinite(v.get<double>()) &&
                        (low_open ? v.get<double>() > low : v.get<double>() >= low) && v.get<double>() <= high;
  if (!in_range)
    throw InputError(key, v.dump(), text_format("must be a number %s %g and <= %g", low_open ? ">" : ">=", low, high));
  return v.get<double>();
}

uint64_t parse_count(const json& v, const std::string& key, uint64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || uint64_t(v.get<int64_t>()) > max)
    throw InputError(key, v.dump(), "must be an integer from 1 to " + std::to_string(max));
  return uint64_t(v.get<int64_t>());
}

std::vector<uint64_t> parse_count_axis(const json& v, const std::string& key, uint64_t max) {
  if (!v.is_array()) return {parse_count(v, key, max)};
  if (v.empty()) throw InputError(key, "[]", "empty list: the sweep would have no cases");
  std::vector<uint64_t> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(parse_count(v[i], key + "[" + std::to_string(i) + "]", max));
  return out;
}

}  // namespace p2pbench
