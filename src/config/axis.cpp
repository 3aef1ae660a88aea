#include "config/axis.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

// Binary multiples in any case: k, K, KiB, kib, ... (as nccl-tests reads -b/-e, K = 1024).
uint64_t multiplier_for(const std::string& suffix) {
  std::string s;
  for (char c : suffix) s += char(std::tolower(static_cast<unsigned char>(c)));
  if (s.empty()) return 1;
  if (s == "k" || s == "kib") return 1ull << 10;
  if (s == "m" || s == "mib") return 1ull << 20;
  if (s == "g" || s == "gib") return 1ull << 30;
  if (s == "t" || s == "tib") return 1ull << 40;
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
  const uint64_t mult = multiplier_for(text.substr(i));
  if (digits.empty() || mult == 0)
    throw InputError(key, "\"" + text + "\"",
                     "not a size: use a positive integer of bytes, optionally with K/KiB, M/MiB, G/GiB or T/TiB "
                     "in any case (binary multiples)");
  uint64_t value = 0;
  for (char d : digits)
    if (__builtin_mul_overflow(value, 10u, &value) || __builtin_add_overflow(value, uint64_t(d - '0'), &value))
      throw InputError(key, "\"" + text + "\"", "size does not fit in 64 bits");
  if (__builtin_mul_overflow(value, mult, &value))
    throw InputError(key, "\"" + text + "\"", "size does not fit in 64 bits (at most 16 EiB)");
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

std::vector<uint64_t> geometric_range(uint64_t min, uint64_t max, uint64_t factor, const std::string& key) {
  if (factor < 2) throw InputError(key + ".factor", std::to_string(factor), "factor must be an integer >= 2");
  if (min > max)
    throw InputError(key, std::to_string(min) + ".." + std::to_string(max), "min is larger than max");
  // min, min*F, min*F^2, ... below max, then max itself: "1..132" ends at 132, not 128.
  std::vector<uint64_t> values;
  for (uint64_t v = min; v < max; v *= factor) {
    values.push_back(v);
    if (v > std::numeric_limits<uint64_t>::max() / factor) break;
  }
  values.push_back(max);
  return values;
}

std::vector<uint64_t> parse_axis(const nlohmann::json& value, const std::string& key, bool sizes, bool zero_allowed) {
  auto parse_value = [&](const nlohmann::json& v, const std::string& k) -> uint64_t {
    if (sizes) return parse_size(v, k);
    const int64_t least = zero_allowed ? 0 : 1;
    if (v.is_number_integer() && v.get<int64_t>() >= least) return static_cast<uint64_t>(v.get<int64_t>());
    throw InputError(k, v.dump(), zero_allowed ? "must be a non-negative integer" : "must be a positive integer");
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
    if (min == 0) throw InputError(key + ".min", "0", "a range starts at 1 or more (list 0 on its own)");
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
