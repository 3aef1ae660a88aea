#include "config/config_keys.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"
#include "common/text_format.hpp"

namespace p2pbench {

using json = nlohmann::json;

namespace {

// Optimal string alignment distance: edits of one character, or two neighbours swapped.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// "did you mean \"a\" or \"b\"? ", or nothing.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : closest_names(given, names)) text += (text.empty() ? "did you mean \"" : " or \"") + n + "\"";
  return text.empty() ? "" : text + "? ";
}

}  // namespace

std::string quoted_list(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  return list;
}

std::vector<std::string> closest_names(const std::string& given, const std::vector<std::string>& names) {
  std::vector<std::string> closest;
  size_t fewest = std::max<size_t>(1, given.size() / 3);
  for (const std::string& n : names) {
    const size_t d = edit_distance(given, n);
    if (d > fewest) continue;
    if (d < fewest) closest.clear(), fewest = d;
    closest.push_back(n);
  }
  return closest;
}

std::string expected_one_of(const json& given, const std::vector<std::string>& names) {
  return (given.is_string() ? did_you_mean(given.get<std::string>(), names) : "") + "expected one of " + quoted_list(names);
}

void reject_unknown_keys(const json& section, const std::set<std::string>& known, const std::string& prefix,
                         const KeyNamer& name) {
  if (!section.is_object()) throw InputError(name(prefix.substr(0, prefix.size() - 1)), section.dump(), "must be an object");
  for (auto it = section.begin(); it != section.end(); ++it) {
    if (known.count(it.key())) continue;
    const std::vector<std::string> names(known.begin(), known.end());
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw InputError(name(prefix + it.key()), it.value().dump(),
                     "unknown key (" + did_you_mean(it.key(), names) + "known keys: " + list + ")");
  }
}

std::vector<std::string> parse_name_list(const json& v, const std::string& key, const KeyNamer& name,
                                         const std::vector<std::string>& allowed) {
  const auto known = [&allowed](const std::string& s) {
    return std::find(allowed.begin(), allowed.end(), s) != allowed.end() ? std::optional<std::string>(s) : std::nullopt;
  };
  return parse_name_list<std::string>(v, key, name, allowed, known);
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
