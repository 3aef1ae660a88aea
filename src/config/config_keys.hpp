// What every section of the config reads its keys with: the errors name the key (and the flag it
// came from, through the namer) and the value, and say what was expected.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"

namespace p2pbench {

// The key as the error names it: "ldst.threads[0] (from --threads)".
using KeyNamer = std::function<std::string(const std::string&)>;

// "\"a\", \"b\"": names as an error lists them.
std::string quoted_list(const std::vector<std::string>& names);

// The names a typo most likely meant: those of `names` fewest edits away (insert, delete,
// replace, or swap two neighbours), where that is within a third of its length; none otherwise.
std::vector<std::string> closest_names(const std::string& given, const std::vector<std::string>& names);

// "expected one of \"a\", \"b\"", led by "did you mean \"a\"? " where `given` is a string close to a name.
std::string expected_one_of(const nlohmann::json& given, const std::vector<std::string>& names);

// `section` must be an object of known keys; `prefix` is its name with the dot ("latency.").
void reject_unknown_keys(const nlohmann::json& section, const std::set<std::string>& known, const std::string& prefix,
                         const KeyNamer& name);

// "key[i]": an element of a list as an error names it.
inline std::string indexed(const std::string& key, size_t i) { return key + "[" + std::to_string(i) + "]"; }

// A non-empty list of names, each one that `parse` takes (std::optional<T> of a name; an error
// lists `allowed`) and none twice: a repeated name would run the same cases again under one
// identity.
template <typename T, typename Parse>
std::vector<T> parse_name_list(const nlohmann::json& v, const std::string& key, const KeyNamer& name,
                               const std::vector<std::string>& allowed, Parse parse) {
  if (!v.is_array() || v.empty())
    throw InputError(name(key), v.dump(), "expected a non-empty list of " + quoted_list(allowed));
  std::vector<T> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::optional<T> value = v[i].is_string() ? parse(v[i].template get<std::string>()) : std::nullopt;
    if (!value) throw InputError(name(indexed(key, i)), v[i].dump(), expected_one_of(v[i], allowed));
    if (std::find(out.begin(), out.end(), *value) != out.end())
      throw InputError(name(indexed(key, i)), v[i].dump(), "listed twice");
    out.push_back(*value);
  }
  return out;
}

// The same list where the names themselves are the values.
std::vector<std::string> parse_name_list(const nlohmann::json& v, const std::string& key, const KeyNamer& name,
                                         const std::vector<std::string>& allowed);

// A number in [low, high] (low excluded where `low_open`): every time the run waits on is
// bounded, so a typo cannot make a case wait for days or give up at once.
double parse_number_in(const nlohmann::json& v, const std::string& key, double low, double high, bool low_open);

// An integer from 1 to max.
uint64_t parse_count(const nlohmann::json& v, const std::string& key, uint64_t max);

// A count, or a list of counts (an axis), each from 1 to max.
std::vector<uint64_t> parse_count_axis(const nlohmann::json& v, const std::string& key, uint64_t max);

}  // namespace p2pbench
