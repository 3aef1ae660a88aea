#include "config/axis.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

uint64_t multiplier_for(const std::string& suffix) {
  if (suffix.empty()) return 1;
  if (suffix == "K" || suffix == "KiB") return 1ull << 10;
  if (suffix == "M" || suffix == "MiB") return 1ull << 20;
  if (suffix == "G" || suffix == "GiB") return 1ull << 30;
  return 0;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(separator, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

uint64_t parse_size_text(const std::string& text, const std::string& key) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  const std::string digits = text.substr(0, i);
  const std::string suffix = text.substr(i);
  const uint64_t mult = multiplier_for(suffix);
  if (digits.empty() || mult == 0)
    throw InputError(key, "\"" + text + "\"",
                     "not a size: use a positive integer of bytes, optionally with K/KiB, M/MiB or G/GiB "
                     "(binary multiples)");
  if (digits.size() > 15) throw InputError(key, "\"" + text + "\"", "size too large");
  const uint64_t value = std::stoull(digits) * mult;
  if (value == 0) throw InputError(key, "\"" + text + "\"", "size must be at least 1 byte");
  return value;
}

uint64_t parse_size(const nlohmann::json& value, const std::string& key) {
  if (value.is_string()) return parse_size_text(value.get<std::string>(), key);
  if (value.is_number_unsigned() && value.get<uint64_t>() > 0) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() > 0) return static_cast<uint64_t>(value.get<int64_t>());
  throw InputError(key, value.dump(),
                   "not a size: use a positive integer of bytes or a string such as \"64KiB\"");
}

std::string format_size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (v == static_cast<double>(static_cast<uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(v), units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::vector<uint64_t> geometric_range(uint64_t min, uint64_t max, uint64_t factor, const std::string& key) {
  if (factor < 2) throw InputError(key + ".factor", std::to_string(factor), "factor must be an integer >= 2");
  if (min > max)
    throw InputError(key, std::to_string(min) + ".." + std::to_string(max), "min is larger than max");
  std::vector<uint64_t> values;
  for (uint64_t v = min; v <= max; v *= factor) {
    values.push_back(v);
    if (v > std::numeric_limits<uint64_t>::max() / factor) break;
  }
  return values;
}

std::vector<uint64_t> parse_axis(const nlohmann::json& value, const std::string& key, bool sizes) {
  auto parse_value = [&](const nlohmann::json& v, const std::string& k) -> uint64_t {
    if (sizes) return parse_size(v, k);
    if (v.is_number_integer() && v.get<int64_t>() > 0) return static_cast<uint64_t>(v.get<int64_t>());
    throw InputError(k, v.dump(), "must be a positive integer");
  };
  if (value.is_array()) {
    if (value.empty()) throw InputError(key, "[]", "empty list: nothing to sweep");
    std::vector<uint64_t> out;
    for (size_t i = 0; i < value.size(); ++i)
      out.push_back(parse_value(value[i], key + "[" + std::to_string(i) + "]"));
    return out;
  }
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      if (it.key() != "min" && it.key() != "max" && it.key() != "factor")
        throw InputError(key + "." + it.key(), it.value().dump(),
                         "unknown key in a range (allowed: min, max, factor)");
    if (!value.contains("min") || !value.contains("max"))
      throw InputError(key, value.dump(), "a range needs both \"min\" and \"max\"");
    const uint64_t min = parse_value(value["min"], key + ".min");
    const uint64_t max = parse_value(value["max"], key + ".max");
    uint64_t factor = 2;
    if (value.contains("factor")) {
      const auto& f = value["factor"];
      if (!f.is_number_integer() || f.get<int64_t>() < 2)
        throw InputError(key + ".factor", f.dump(), "factor must be an integer >= 2");
      factor = static_cast<uint64_t>(f.get<int64_t>());
    }
    return geometric_range(min, max, factor, key);
  }
  if (value.is_number() || value.is_string()) return {parse_value(value, key)};
  throw InputError(key, value.dump(), "expected a list, a {min, max, factor} range, or a single value");
}

nlohmann::json axis_flag_to_json(const std::string& text, const std::string& flag) {
  if (text.empty()) throw InputError(flag, "\"\"", "empty value");
  const size_t dots = text.find("..");
  auto value_json = [](const std::string& s) -> nlohmann::json {
    bool digits = !s.empty();
    for (char c : s) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits && s.size() < 16) return std::stoll(s);
    return s;  // validated (and rejected if bad) by parse_axis, which names the key
  };
  if (dots != std::string::npos) {
    std::string max_part = text.substr(dots + 2);
    nlohmann::json range = {{"min", value_json(text.substr(0, dots))}};
    const size_t colon = max_part.find(':');
    if (colon != std::string::npos) {
      range["factor"] = value_json(max_part.substr(colon + 1));
      max_part = max_part.substr(0, colon);
    }
    range["max"] = value_json(max_part);
    return range;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& part : split_list(text)) list.push_back(value_json(part));
  return list;
}

}  // namespace p2pbench
