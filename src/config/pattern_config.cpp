#include "config/pattern_config.hpp"

#include <algorithm>
#include <set>

#include "common/errors.hpp"
#include "config/config_keys.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;
using Namer = std::function<std::string(const std::string&)>;

// No group has more ranks than this; larger rank numbers and counts are typos.
constexpr uint64_t kLargestRank = 65535;
// Seeds are JSON integers: exact up to 2^53.
constexpr uint64_t kLargestSeed = (uint64_t{1} << 53) - 1;
constexpr uint64_t kMostAlonePairs = 10000;

uint64_t parse_integer(const json& v, const std::string& key, uint64_t min, uint64_t max, const std::string& what) {
  if (!v.is_number_integer() || v.get<int64_t>() < int64_t(min) || uint64_t(v.get<int64_t>()) > max)
    throw InputError(key, v.dump(), what + ": an integer from " + std::to_string(min) + " to " + std::to_string(max));
  return uint64_t(v.get<int64_t>());
}

// A non-empty list of distinct integers from min to max.
std::vector<uint64_t> parse_integer_list(const json& v, const std::string& key, uint64_t min, const std::string& what) {
  if (!v.is_array() || v.empty()) throw InputError(key, v.dump(), "expected a non-empty list of " + what);
  std::vector<uint64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t value = parse_integer(v[i], indexed(key, i), min, kLargestRank, what);
    if (std::find(out.begin(), out.end(), value) != out.end())
      throw InputError(indexed(key, i), v[i].dump(), "listed twice (each would be the same case)");
    out.push_back(value);
  }
  return out;
}

void parse_matrix_section(const json& s, const Namer& name, PatternSettings& out) {
  reject_unknown_keys(s, {"schedule", "check_alone_pairs", "seed"}, "matrix.", name);
  if (s.contains("schedule")) {
    const json& v = s["schedule"];
    const auto schedule = v.is_string() ? parse_schedule(v.get<std::string>()) : std::nullopt;
    // alone_check is what the rounds add, not a schedule of its own.
    if (!schedule || *schedule == Schedule::kAloneCheck)
      throw InputError(name("matrix.schedule"), v.dump(), "expected \"sequential\" (one pair at a time) or \"rounds\"");
    out.matrix_schedule = *schedule;
  }
  if (s.contains("check_alone_pairs"))
    out.check_alone_pairs = parse_integer(s["check_alone_pairs"], name("matrix.check_alone_pairs"), 0, kMostAlonePairs,
                                          "pairs re-measured alone after the rounds");
  if (s.contains("seed")) out.matrix_seed = parse_integer(s["seed"], name("matrix.seed"), 0, kLargestSeed, "a seed");
}

// One [src, dst] pair of the "flows" key.
Flow parse_flow(const json& v, const std::string& key) {
  if (!v.is_array() || v.size() != 2)
    throw InputError(key, v.dump(), "a flow is [source rank, destination rank]");
  const int src = int(parse_integer(v[0], key, 0, kLargestRank, "a source rank"));
  const int dst = int(parse_integer(v[1], key, 0, kLargestRank, "a destination rank"));
  if (src == dst) throw InputError(key, v.dump(), "a flow goes from one rank to another, not to itself");
  return {src, dst};
}

std::vector<std::vector<Flow>> parse_flow_lists(const json& v, const Namer& name) {
  if (!v.is_array() || v.empty())
    throw InputError(name("flows"), v.dump(), "expected a list of cases, each a list of [src, dst] flows, e.g. [[[0, 1], [2, 3]]]");
  std::vector<std::vector<Flow>> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string list_key = indexed("flows", i);
    if (!v[i].is_array() || v[i].empty())
      throw InputError(name(list_key), v[i].dump(), "expected a non-empty list of [src, dst] flows");
    std::vector<Flow> flows;
    for (size_t j = 0; j < v[i].size(); ++j) {
      const std::string key = name(indexed(list_key, j));
      const Flow f = parse_flow(v[i][j], key);
      if (std::find(flows.begin(), flows.end(), f) != flows.end())
        throw InputError(key, v[i][j].dump(), "the same flow twice in one case");
      flows.push_back(f);
    }
    out.push_back(flows);
  }
  return out;
}

void parse_pattern_sections(const json& doc, const Namer& name, PatternSettings& out) {
  if (doc.contains("sampled")) {
    const json& s = doc["sampled"];
    reject_unknown_keys(s, {"peers", "seed"}, "sampled.", name);
    if (s.contains("peers"))
      out.sampled_peers = parse_integer(s["peers"], name("sampled.peers"), 1, kLargestRank, "peers per rank");
    if (s.contains("seed")) out.sampled_seed = parse_integer(s["seed"], name("sampled.seed"), 0, kLargestSeed, "a seed");
  }
  if (doc.contains("ring")) {
    reject_unknown_keys(doc["ring"], {"shifts"}, "ring.", name);
    if (doc["ring"].contains("shifts"))
      out.ring_shifts = parse_integer_list(doc["ring"]["shifts"], name("ring.shifts"), 1, "shifts (rank r sends to r + k)");
  }
  for (const auto& [section, roots] : {std::pair{"one_to_all", &out.one_to_all_roots}, {"all_to_one", &out.all_to_one_roots}}) {
    if (!doc.contains(section)) continue;
    reject_unknown_keys(doc[section], {"roots"}, std::string(section) + ".", name);
    if (doc[section].contains("roots"))
      *roots = parse_integer_list(doc[section]["roots"], name(std::string(section) + ".roots"), 0, "root ranks");
  }
}

}  // namespace

bool PatternSettings::uses(Pattern p) const { return std::find(patterns.begin(), patterns.end(), p) != patterns.end(); }

json PatternSettings::to_json() const {
  json names = json::array();
  for (Pattern p : patterns) names.push_back(to_string(p));
  json flow_lists = json::array();
  for (const auto& list : flows) {
    json l = json::array();
    for (const Flow& f : list) l.push_back({f.src_rank, f.dst_rank});
    flow_lists.push_back(l);
  }
  return json{{"patterns", names},
              {"matrix", {{"schedule", to_string(matrix_schedule)}, {"check_alone_pairs", check_alone_pairs}, {"seed", matrix_seed}}},
              {"sampled", {{"peers", sampled_peers}, {"seed", sampled_seed}}},
              {"ring", {{"shifts", ring_shifts}}},
              {"one_to_all", {{"roots", one_to_all_roots}}},
              {"all_to_one", {{"roots", all_to_one_roots}}},
              {"flows", flows.empty() ? json() : flow_lists}};
}

const std::vector<std::pair<std::string, std::string>>& pattern_key_help() {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"patterns", "which flows the bandwidth methods (ce, ldst, tma, staged, nccl) run at once: [\"matrix\" (default), "
                   "\"sampled\", \"one_to_all\", \"all_to_one\", \"all_to_all\", \"ring\", \"bisection\", \"flows\"]; "
                   "latency and atomic methods always run every ordered pair alone"},
      {"matrix", "{\"schedule\": \"sequential\" (one pair at a time, default) | \"rounds\" (disjoint pairs at once, no GPU "
                 "twice in a round), \"check_alone_pairs\" (pairs re-measured alone after the rounds, default 4), \"seed\"}"},
      {"sampled", "{\"peers\" (random peers per rank, default 2, at most ranks - 1), \"seed\" (default 1, recorded)}"},
      {"ring", "{\"shifts\": [1]}: one case per shift k, rank r sends to (r + k) mod ranks"},
      {"one_to_all", "{\"roots\": [0]}: one case per root, the root sends to every other rank"},
      {"all_to_one", "{\"roots\": [0]}: one case per root, every other rank sends to the root"},
      {"flows", "explicit cases for the \"flows\" pattern: a list of cases, each a list of [src, dst] rank pairs"},
  };
  return keys;
}

void parse_pattern_keys(const json& doc, const Namer& name, PatternSettings& out) {
  if (doc.contains("patterns")) out.patterns = parse_name_list<Pattern>(doc["patterns"], "patterns", name, pattern_names(), parse_pattern);
  if (doc.contains("matrix")) parse_matrix_section(doc["matrix"], name, out);
  parse_pattern_sections(doc, name, out);
  if (doc.contains("flows") && !doc["flows"].is_null()) out.flows = parse_flow_lists(doc["flows"], name);
  if (out.uses(Pattern::kFlows) && out.flows.empty())
    throw InputError(name("flows"), "(missing)", "the \"flows\" pattern needs the cases' flows: [[[0, 1], [2, 3]], ...]");
}

}  // namespace p2pbench
