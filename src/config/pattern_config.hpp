// The config keys that choose the plan's patterns: which sets of concurrent flows the
// bandwidth methods run, and how the matrix is scheduled. Validated on their own here; rank
// numbers are checked against the group when the plan is made (the group's size is known then).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vocab/flows.hpp"
#include "vocab/methods.hpp"
#include "vocab/variants.hpp"

namespace p2pbench {

struct PatternSettings {
  std::vector<Pattern> patterns{Pattern::kMatrix};
  Schedule matrix_schedule = Schedule::kSequential;  // "matrix.schedule": sequential | rounds
  uint64_t check_alone_pairs = 4;   // "matrix.check_alone_pairs": pairs re-measured alone after the rounds
  uint64_t matrix_seed = 1;         // "matrix.seed": which pairs those are
  uint64_t sampled_peers = 2;       // "sampled.peers": peers per rank (at most the group's size - 1)
  uint64_t sampled_seed = 1;        // "sampled.seed"
  std::vector<uint64_t> ring_shifts{1};       // "ring.shifts"
  std::vector<uint64_t> one_to_all_roots{0};  // "one_to_all.roots"
  std::vector<uint64_t> all_to_one_roots{0};  // "all_to_one.roots"
  std::vector<std::vector<Flow>> flows;       // "flows": the flows pattern's cases

  bool uses(Pattern p) const;
  // The keys above as the config file spells them (merged into Config::to_json).
  nlohmann::json to_json() const;
};

// The top-level keys this file owns, with their help lines (config_key_help lists them).
const std::vector<std::pair<std::string, std::string>>& pattern_key_help();

// Reads the pattern keys of `doc` (the whole config document) into `out`. `name` turns a key
// path ("matrix.schedule") into the name the user wrote (with the flag it came from).
// Throws InputError naming the key and the value.
void parse_pattern_keys(const nlohmann::json& doc, const std::function<std::string(const std::string&)>& name,
                        PatternSettings& out);

}  // namespace p2pbench
