#include "config/config.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "common/errors.hpp"
#include "config/axis.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

// Names the key as the user wrote it: "samples (from --samples)" for a flag override.
class KeyNamer {
 public:
  explicit KeyNamer(const KeyOrigins& origins) : origins_(origins) {}
  std::string operator()(const std::string& key) const {
    // A nested key ("ldst.blocks[2]") takes the origin of its closest overridden parent.
    for (std::string k = key; !k.empty();) {
      const auto it = origins_.find(k);
      if (it != origins_.end()) return key + " (from " + it->second + ")";
      const size_t cut = k.find_last_of(".[");
      if (cut == std::string::npos) break;
      k = k.substr(0, cut);
    }
    return key;
  }

 private:
  const KeyOrigins& origins_;
};

void reject_unknown_keys(const json& obj, const std::set<std::string>& allowed, const std::string& prefix,
                         const KeyNamer& name) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (allowed.count(it.key())) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw InputError(name(prefix + it.key()), it.value().dump(), "unknown key (known keys: " + list + ")");
  }
}

template <typename E>
std::vector<E> parse_enum_list(const json& doc, const std::string& key, const KeyNamer& name,
                               std::optional<E> (*parse)(const std::string&), const std::string& allowed) {
  const json& v = doc.at(key);
  if (!v.is_array()) throw InputError(name(key), v.dump(), "expected a list, e.g. [" + allowed + "]");
  if (v.empty()) throw InputError(name(key), "[]", "empty list: the sweep would have no cases");
  std::vector<E> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto parsed = v[i].is_string() ? parse(v[i].get<std::string>()) : std::nullopt;
    if (!parsed) throw InputError(name(key + "[" + std::to_string(i) + "]"), v[i].dump(), "expected one of " + allowed);
    out.push_back(*parsed);
  }
  return out;
}

double parse_positive_number(const json& v, const std::string& key, bool allow_zero) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      (!allow_zero && v.get<double>() == 0))
    throw InputError(key, v.dump(), allow_zero ? "must be a number >= 0" : "must be a number > 0");
  return v.get<double>();
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& config_key_help() {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"label", "name of this run/system, recorded in the results (string)"},
      {"description", "free text about the config (ignored)"},
      {"methods", "[\"ce\", \"ldst\", \"tma\"] between the GPUs; [\"h2d\", \"d2h\"] each GPU's host link; "
                  "baselines [\"staged\" (through host memory), \"nccl\" (send/recv)]"},
      {"directions", "[\"push\", \"pull\"]: push = the source GPU writes, pull = the destination GPU reads"},
      {"modes", "[\"uni\", \"bidir\"]: one direction at a time, or both ranks at once"},
      {"sizes", "message sizes in bytes: a list, or {\"min\", \"max\", \"factor\"}; \"64KiB\" style allowed"},
      {"samples", "timed samples per case (integer >= 1, default 10)"},
      {"min_sample_time_ms", "each sample repeats the transfer for at least this long (default 1.0)"},
      {"warmup_time_ms", "untimed warm-up per case (default 10)"},
      {"verify", "check every byte after every sample (default true)"},
      {"buffer_pool_bytes", "rotate through this much memory per buffer so small messages miss L2 (0 = off)"},
      {"gate_timeout_s", "a GPU waiting at the start gate gives up after this long (default 10)"},
      {"ldst", "{\"blocks\", \"threads\", \"unroll\"} axes of the LD/ST kernel"},
      {"tma", "{\"blocks\", \"smem_bytes\", \"stages\"} axes of the TMA kernel"},
  };
  return keys;
}

json read_json_file(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) throw InputError(key, "\"" + path + "\"", "cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw InputError(key, "\"" + path + "\"", std::string("invalid JSON: ") + e.what());
  }
}

Config parse_config(const json& doc, const KeyOrigins& origins) {
  const KeyNamer name(origins);
  if (!doc.is_object()) throw InputError("config", doc.dump().substr(0, 40), "the config must be a JSON object");
  std::set<std::string> allowed;
  for (const auto& [key, help] : config_key_help()) allowed.insert(key);
  reject_unknown_keys(doc, allowed, "", name);

  Config c;
  if (doc.contains("label")) {
    if (!doc["label"].is_string() || doc["label"].get<std::string>().empty())
      throw InputError(name("label"), doc["label"].dump(), "must be a non-empty string");
    c.label = doc["label"].get<std::string>();
  }
  if (doc.contains("methods")) c.methods = parse_enum_list<Method>(doc, "methods", name, parse_method,
                                                         "\"ce\", \"ldst\", \"tma\", \"h2d\", \"d2h\", \"staged\", \"nccl\"");
  if (doc.contains("directions"))
    c.directions = parse_enum_list<Direction>(doc, "directions", name, parse_direction, "\"push\", \"pull\"");
  if (doc.contains("modes")) c.modes = parse_enum_list<Mode>(doc, "modes", name, parse_mode, "\"uni\", \"bidir\"");
  if (!doc.contains("sizes")) throw InputError(name("sizes"), "(missing)", "the config must list message sizes");
  try {
    c.sizes = parse_axis(doc["sizes"], "sizes", true);
  } catch (const InputError& e) {
    throw InputError(name(e.key()) + std::string(e.what()).substr(e.key().size()));
  }
  if (doc.contains("samples")) {
    const json& v = doc["samples"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100000)
      throw InputError(name("samples"), v.dump(), "must be an integer from 1 to 100000");
    c.samples = static_cast<int>(v.get<int64_t>());
  }
  if (doc.contains("min_sample_time_ms"))
    c.min_sample_time_ms = parse_positive_number(doc["min_sample_time_ms"], name("min_sample_time_ms"), false);
  if (doc.contains("warmup_time_ms"))
    c.warmup_time_ms = parse_positive_number(doc["warmup_time_ms"], name("warmup_time_ms"), true);
  if (doc.contains("gate_timeout_s"))
    c.gate_timeout_s = parse_positive_number(doc["gate_timeout_s"], name("gate_timeout_s"), false);
  if (doc.contains("verify")) {
    if (!doc["verify"].is_boolean()) throw InputError(name("verify"), doc["verify"].dump(), "must be true or false");
    c.verify = doc["verify"].get<bool>();
  }
  if (doc.contains("buffer_pool_bytes")) {
    const json& v = doc["buffer_pool_bytes"];
    c.buffer_pool_bytes = (v.is_number_integer() && v.get<int64_t>() == 0) ? 0 : parse_size(v, name("buffer_pool_bytes"));
  }

  auto parse_kernel_axes = [&](const char* section, const std::vector<std::pair<const char*, std::vector<uint64_t>*>>& axes) {
    if (!doc.contains(section)) return;
    const json& s = doc[section];
    if (!s.is_object()) throw InputError(name(section), s.dump(), "must be an object of axes");
    std::set<std::string> known;
    for (const auto& [key, target] : axes) known.insert(key);
    reject_unknown_keys(s, known, std::string(section) + ".", name);
    for (const auto& [key, target] : axes) {
      if (!s.contains(key)) continue;
      const std::string full = std::string(section) + "." + key;
      try {
        *target = parse_axis(s[key], full, std::string(key) == "smem_bytes");
      } catch (const InputError& e) {
        throw InputError(name(e.key()) + std::string(e.what()).substr(e.key().size()));
      }
    }
  };
  parse_kernel_axes("ldst", {{"blocks", &c.ldst.blocks}, {"threads", &c.ldst.threads}, {"unroll", &c.ldst.unroll}});
  parse_kernel_axes("tma", {{"blocks", &c.tma.blocks}, {"smem_bytes", &c.tma.smem_bytes}, {"stages", &c.tma.stages}});
  return c;
}

json Config::to_json() const {
  auto names = [](const auto& list) {
    json out = json::array();
    for (auto v : list) out.push_back(to_string(v));
    return out;
  };
  return json{{"label", label},
              {"methods", names(methods)},
              {"directions", names(directions)},
              {"modes", names(modes)},
              {"sizes", sizes},
              {"samples", samples},
              {"min_sample_time_ms", min_sample_time_ms},
              {"warmup_time_ms", warmup_time_ms},
              {"verify", verify},
              {"buffer_pool_bytes", buffer_pool_bytes},
              {"gate_timeout_s", gate_timeout_s},
              {"ldst", {{"blocks", ldst.blocks}, {"threads", ldst.threads}, {"unroll", ldst.unroll}}},
              {"tma", {{"blocks", tma.blocks}, {"smem_bytes", tma.smem_bytes}, {"stages", tma.stages}}}};
}

}  // namespace p2pbench
